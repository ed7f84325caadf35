/* The microkernel reference; see reference.h. */
#include "reference.h"

void ct_ref_ukernel(const long *d, long lanes, const float *I, const float *W, float *O, long nc, int acc) {
  if (d[CT_DWK]) {
    ct_ref_dwkernel(d, lanes, I, W, O, nc, acc);
    return;
  }
  for (long h = 0; h < d[CT_H]; ++h)
    for (long w = 0; w < d[CT_W]; ++w)
      for (long kk = 0; kk < d[CT_K] * lanes; ++kk) {
        float *o = &O[h * d[CT_OROW] + w * d[CT_OPIX] + kk];
        double sum = acc ? *o : 0.0;
        for (long c = 0; c < nc * d[CT_C]; ++c)
          for (long r = 0; r < d[CT_R]; ++r)
            for (long s = 0; s < d[CT_S]; ++s)
              sum += (double)I[(h * d[CT_ST] + r * d[CT_DH]) * d[CT_IROW] + (w * d[CT_STW] + s * d[CT_DW]) * d[CT_IPIX] + c] *
                     W[r * d[CT_WR] + s * d[CT_WS] + (c / d[CT_C]) * d[CT_WIT] + (c % d[CT_C]) * d[CT_WC] + kk];
        *o = (float)sum;
      }
}

void ct_ref_dwkernel(const long *d, long lanes, const float *I, const float *W, float *O, long nc, int acc) {
  for (long h = 0; h < d[CT_H]; ++h)
    for (long w = 0; w < d[CT_W]; ++w)
      for (long kk = 0; kk < d[CT_K] * lanes; ++kk) {
        float *o = &O[h * d[CT_OROW] + w * d[CT_OPIX] + kk];
        double sum = acc ? *o : 0.0;
        for (long it = 0; it < nc; ++it)
          for (long r = 0; r < d[CT_R]; ++r)
            for (long s = 0; s < d[CT_S]; ++s)
              sum += (double)I[(h * d[CT_ST] + r * d[CT_DH]) * d[CT_IROW] + (w * d[CT_STW] + s * d[CT_DW]) * d[CT_IPIX] + kk] *
                     W[it * d[CT_WIT] + r * d[CT_WR] + s * d[CT_WS] + kk];
        *o = (float)sum;
      }
}

double ct_ref_epilogue(int epilogue, double sum, double bias, double residual) {
  if (epilogue == CT_EPILOGUE_NONE) return sum;
  double v = sum + bias;
  if (epilogue == CT_EPILOGUE_BIAS_ADD) v += residual;
  if (epilogue == CT_EPILOGUE_BIAS_RELU || epilogue == CT_EPILOGUE_BIAS_RELU6) v = v < 0 ? 0 : v;
  if (epilogue == CT_EPILOGUE_BIAS_RELU6) v = v > 6 ? 6 : v;
  return v;
}
