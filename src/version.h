/* version.h: --version, as exporter-toolkit's (prometheus/common/version.Print): the version, the
 * git revision it was built from (the Makefile's SHIM_REVISION; "unknown" outside a git checkout),
 * the build date when the build set one (SOURCE_DATE_EPOCH, for reproducible builds), and the
 * versions of the libraries it runs with, read from each library at run time where it has a call
 * for it (libdeflate has none: its build-time version is printed, and says so). */
#ifndef SHIM_VERSION_H
#define SHIM_VERSION_H

#include <stdio.h>

void version_print(FILE *f);

#endif
