/* The one hash of tilecast, FNV-1a: in 64 bits for content and
 * configuration hashes stored in databases (a sweep's file, a collect
 * configuration, an import's run key) and for hash tables, in 32 bits for
 * what a stored calibration keys by. Stored hashes depend on it: it must
 * never change. Internal. */
#ifndef TC_HASH_H
#define TC_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a's 64-bit offset basis, the seed of a hash that starts afresh;
 * passing a previous result as seed hashes a concatenation. */
#define TC_FNV1A64_SEED 0xcbf29ce484222325ULL

/* 64-bit FNV-1a of the len bytes at data, starting from seed. */
uint64_t tc_fnv1a64(const void *data, size_t len, uint64_t seed);

/* The same in 32 bits, for the 32-bit hashes a calibration stores (kernel
 * names, the model fingerprint): stored values must keep their width. */
#define TC_FNV1A32_SEED 2166136261u
uint32_t tc_fnv1a32(const void *data, size_t len, uint32_t seed);

#endif
