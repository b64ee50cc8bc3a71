#ifndef JOBRUNNER_CLMDB_SHIM_H
#define JOBRUNNER_CLMDB_SHIM_H
#include <lmdb.h>
#endif
