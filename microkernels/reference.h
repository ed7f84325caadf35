/* The contract's scalar references for one microkernel (CONTRACT.md; dense and depthwise), one
 * implementation for the driver (driver.c checks every profiled microkernel)
 * and convtune's tests (reference_ukernel in ukernel/codegen.h); and the
 * epilogue of generated convolutions, applied after the reference
 * convolution (reference_point in runner.h). */
#ifndef CT_REFERENCE_H
#define CT_REFERENCE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The indices of d[]: the sizes, then the layout baked into the microkernel. */
/* CT_DWK: 1 for a depthwise microkernel (CONTRACT.md "Depthwise microkernels"), 0 for a dense one. */
enum { CT_K, CT_C, CT_W, CT_H, CT_R, CT_S, CT_IROW, CT_IPIX, CT_ST, CT_WR, CT_WS, CT_WC, CT_WIT, CT_OROW, CT_OPIX,
       CT_STW, CT_DH, CT_DW, CT_DWK, CT_NPARAM };

/* O = (acc ? O : 0) + the block's convolution over nc * d[CT_C] channels, in double;
   channel c's weights are at (c / d[CT_C]) * d[CT_WIT] + (c % d[CT_C]) * d[CT_WC].
   With d[CT_DWK] set, ct_ref_dwkernel's instead. */
void ct_ref_ukernel(const long *d, long lanes, const float *I, const float *W, float *O, long nc, int acc);

/* The depthwise microkernel (CONTRACT.md "Depthwise microkernels"): output
   channel kk reads input channel kk only, O = (acc ? O : 0) + sum over the nc
   c steps it and the taps of I[tap's pixel + kk] * W[it * d[CT_WIT] + r * d[CT_WR]
   + s * d[CT_WS] + kk]; d[CT_C] is 1 and d[CT_WC] unused. */
void ct_ref_dwkernel(const long *d, long lanes, const float *I, const float *W, float *O, long nc, int acc);

/* Epilogues of generated convolutions (CONTRACT.md "Epilogues"; convtune's Epilogue). */
enum { CT_EPILOGUE_NONE, CT_EPILOGUE_BIAS, CT_EPILOGUE_BIAS_RELU, CT_EPILOGUE_BIAS_RELU6, CT_EPILOGUE_BIAS_ADD };

/* One output element after the epilogue: `sum` is the convolution's value,
   `bias` its channel's bias, `residual` the same element of the second tensor
   (used by CT_EPILOGUE_BIAS_ADD only). */
double ct_ref_epilogue(int epilogue, double sum, double bias, double residual);

#ifdef __cplusplus
}
#endif
#endif
