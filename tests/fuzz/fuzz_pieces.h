/* fuzz_pieces.h: an answer as its bytes arrive, for the fuzz targets of chunked readers (the
 * exposition reader, the slurmrestd JSON converter): [text, text+size) is handed to fn in pieces
 * of `chunk` bytes, each copied into one buffer that is overwritten (with '"') after the call, so
 * a reader that keeps a pointer into a piece reads garbage and the target notices. Borrows
 * everything; the buffer is freed before returning. */
#ifndef SHIM_FUZZ_PIECES_H
#define SHIM_FUZZ_PIECES_H

#include <stdlib.h>
#include <string.h>

static inline void fuzz_pieces(const char *text, size_t size, size_t chunk,
			       void (*fn)(void *ctx, const char *piece, size_t n), void *ctx)
{
	char *piece = malloc(chunk);
	if (!piece)
		abort();
	for (size_t off = 0; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		memcpy(piece, text + off, n);
		fn(ctx, piece, n);
		memset(piece, '"', chunk);
	}
	free(piece);
}

#endif
