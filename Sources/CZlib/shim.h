#ifndef JOBRUNNER_CZLIB_SHIM_H
#define JOBRUNNER_CZLIB_SHIM_H
// zlib's crc32: the checksum of every record the LMDB store writes (JobRunnerLMDB/StoredValue.swift).
#include <zlib.h>
#endif
