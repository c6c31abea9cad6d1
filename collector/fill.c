/* Random input data for the backends' operands (tc_random_fill). Apart from
 * the harness so that the GPU backend modules, which link it, need nothing
 * else of the collector. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "collector.h"
#include "tc-internal.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Bit patterns with the exponent of [0.5, 1) and random sign and mantissa:
 * valid, normal, never zero, in every format without any conversion code. */
void tc_random_fill(void *buf, size_t n, enum tc_dtype dtype, uint64_t seed)
{
    uint64_t st = seed;

    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(&st);
        uint64_t sign = r >> 63;

        switch (dtype) {
        case TC_DTYPE_FP64: {
            uint64_t bits = sign << 63 | UINT64_C(1022) << 52 | (r & ((UINT64_C(1) << 52) - 1));

            memcpy((char *)buf + i * 8, &bits, 8);
            break;
        }
        case TC_DTYPE_FP32:
        case TC_DTYPE_TF32: {
            uint32_t bits = (uint32_t)(sign << 31 | 126u << 23 | (r & 0x7fffffu));

            memcpy((char *)buf + i * 4, &bits, 4);
            break;
        }
        case TC_DTYPE_FP16: {
            uint16_t bits = (uint16_t)(sign << 15 | 14u << 10 | (r & 0x3ffu));

            memcpy((char *)buf + i * 2, &bits, 2);
            break;
        }
        case TC_DTYPE_BF16: {
            uint16_t bits = (uint16_t)(sign << 15 | 126u << 7 | (r & 0x7fu));

            memcpy((char *)buf + i * 2, &bits, 2);
            break;
        }
        case TC_DTYPE_FP8: /* e4m3: bias 7 */
            ((uint8_t *)buf)[i] = (uint8_t)(sign << 7 | 6u << 3 | (r & 0x7u));
            break;
        case TC_DTYPE_INT8:
            ((int8_t *)buf)[i] = (int8_t)((sign ? -1 : 1) * (int)(1 + (r & 0x3f)));
            break;
        default:
            break;
        }
    }
}
