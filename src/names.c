/* names.c: see names.h. */
#include "names.h"

#define L(c) [c] = NAME_START | NAME_CHAR | LABEL_START | LABEL_CHAR
#define D(c) [c] = NAME_CHAR | LABEL_CHAR
const unsigned char names_class[256] = {
	['_'] = NAME_START | NAME_CHAR | LABEL_START | LABEL_CHAR, [':'] = NAME_START | NAME_CHAR,
	D('0'), D('1'), D('2'), D('3'), D('4'), D('5'), D('6'), D('7'), D('8'), D('9'),
	L('a'), L('b'), L('c'), L('d'), L('e'), L('f'), L('g'), L('h'), L('i'), L('j'), L('k'), L('l'), L('m'),
	L('n'), L('o'), L('p'), L('q'), L('r'), L('s'), L('t'), L('u'), L('v'), L('w'), L('x'), L('y'), L('z'),
	L('A'), L('B'), L('C'), L('D'), L('E'), L('F'), L('G'), L('H'), L('I'), L('J'), L('K'), L('L'), L('M'),
	L('N'), L('O'), L('P'), L('Q'), L('R'), L('S'), L('T'), L('U'), L('V'), L('W'), L('X'), L('Y'), L('Z'),
};
