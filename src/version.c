/* version.c: see version.h. */
#include "version.h"

#include <curl/curl.h>
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <libdeflate.h>
#include <microhttpd.h>
#include <sys/utsname.h>
#include <yajl/yajl_version.h>
#include <yaml.h>

#ifndef SHIM_VERSION
#define SHIM_VERSION "0.0.0"
#endif
#ifndef SHIM_REVISION
#define SHIM_REVISION "unknown"
#endif

void version_print(FILE *f)
{
	const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
	int y = yajl_version();
	struct utsname u;
	fprintf(f, "slurm-exporter-shim, version %s (revision: %s)\n", SHIM_VERSION, SHIM_REVISION);
#ifdef SHIM_BUILD_DATE
	fprintf(f, "  build date:       %s\n", SHIM_BUILD_DATE);
#endif
	fprintf(f, "  libmicrohttpd:    %s\n", MHD_get_version());
	fprintf(f, "  libcurl:          %s%s%s%s\n", curl->version, curl->ssl_version ? " (" : "",
		curl->ssl_version ? curl->ssl_version : "", curl->ssl_version ? ")" : "");
	fprintf(f, "  gnutls:           %s\n", gnutls_check_version(NULL));
	fprintf(f, "  jansson:          %s\n", jansson_version_str());
	fprintf(f, "  yajl:             %d.%d.%d\n", y / 10000, y / 100 % 100, y % 100);
	fprintf(f, "  libyaml:          %s\n", yaml_get_version_string());
	fprintf(f, "  libdeflate:       %s (built with; it has no version call)\n", LIBDEFLATE_VERSION_STRING);
	if (uname(&u) == 0)
		fprintf(f, "  platform:         %s/%s\n", u.sysname, u.machine);
}
