/* placeholder until the cuda backend lands */
typedef int tc_cuda_placeholder_t;
