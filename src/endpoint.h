/* endpoint.h: TRANSITIONAL. The old names of source.h, for files that are renamed after the
 * parallel work is merged (the lead's sed script replaces every use and deletes this file). */
#ifndef SHIM_ENDPOINT_H
#define SHIM_ENDPOINT_H

#include "source.h"

#define endpoint source_id
#define endpoint_info source
#define endpoints sources
#define endpoint_for_metric source_for_metric
#define EP_JOBS SRC_JOBS
#define EP_NODES SRC_NODES
#define EP_PARTITIONS SRC_PARTITIONS
#define EP_SCHEDULER SRC_SCHEDULER
#define EP_UA SRC_UA
#define EP_COUNT SRC_COUNT

#endif
