/* What the files of the gemm suite share (test-gemm.c,
 * test-gemm-catalogue.c). */
#ifndef TC_TEST_GEMM_H
#define TC_TEST_GEMM_H

#include <check.h>

/* the catalogue's loading, its errors and its entries' geometry */
TCase *gemm_catalogue_tcase(void);

#endif
