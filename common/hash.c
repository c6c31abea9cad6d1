/* 64-bit FNV-1a (hash.h): simple, fast on short keys, and stable, which
 * the hashes stored in databases need more than strength. */
#include "config.h"

#include "hash.h"

uint64_t tc_fnv1a64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = seed;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint32_t tc_fnv1a32(const void *data, size_t len, uint32_t seed)
{
    const unsigned char *p = data;
    uint32_t h = seed;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}
