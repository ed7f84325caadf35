#!/usr/bin/python3
"""A prototype, not product code: Winograd for resnet18-1 (7x7, stride 2,
pad 3, C=3, K=64, 224x224), output transform fused into the accumulation.

1D, stride 2, 7 taps, 2 outputs, the polyphase split of wino_transform.cpp's
stride-2 form carried to 7 taps: the even taps (g0,g2) and (g4,g6) as two
F(2,2) (3 products each), the odd taps (g1,g3,g5) as F(2,3) (4 products):
10 products per dimension where the direct sum has 14; 100 per 2x2 tile
against 196 (1.96x fewer multiply-adds). With C=3 the GEMMs of the
Wino(2) view would be 3 deep and their 100 output planes (25.6 KB a tile)
would go through memory, so here each point's product (3 FMAs) is added
straight into the 2x2 outputs' accumulators (A^T x A^T has entries -1,0,1).

    NT=4 ./gen.py > proto.c      # NT tiles per group, one vector of K per pass
"""
import os, sys

BT = [[1,0,-1,0,0,0,0,0,0],[0,0,1,0,0,0,0,0,0],[0,0,-1,0,1,0,0,0,0],[0,0,0,0,1,0,-1,0,0],[0,0,0,0,0,0,1,0,0],
      [0,0,0,0,0,0,-1,0,1],[0,1,0,0,0,-1,0,0,0],[0,0,0,1,0,1,0,0,0],[0,0,0,-1,0,1,0,0,0],[0,0,0,1,0,0,0,-1,0]]
G = [[1,0,0,0,0,0,0],[1,0,1,0,0,0,0],[0,0,1,0,0,0,0],[0,0,0,0,1,0,0],[0,0,0,0,1,0,1],[0,0,0,0,0,0,1],
     [0,1,0,0,0,0,0],[0,.5,0,.5,0,.5,0],[0,.5,0,-.5,0,.5,0],[0,0,0,0,0,1,0]]
AT = [[1,1,0,1,1,0,1,1,1,0],[0,1,1,0,1,1,0,1,-1,-1]]
NT = int(os.environ.get('NT', '4'))
TXP = 80  # transposed row length: 56 tiles + the 16-lane reads past them
o = []
w = o.append

def combo(coef, name):
    pos = [name(i) for i, c in enumerate(coef) if c == 1]
    s = pos[0]
    for x in pos[1:]: s = f'_mm512_add_ps({s},{x})'
    for i, c in enumerate(coef):
        if c == -1: s = f'_mm512_sub_ps({s},{name(i)})'
    return s

w('#include <immintrin.h>\n')
w('static const double GG[10][7] = {' + ','.join('{' + ','.join(map(str, r)) + '}' for r in G) + '};\n')
w('''/* U[K/16][100][3][16] = G g G^T, in double, once. */
void proto_pack(const float *kcrs, float *U) {
  for (int k = 0; k < 64; ++k)
    for (int c = 0; c < 3; ++c) {
      double t[10][7], u[10][10]; const float *g = kcrs + (k * 3 + c) * 49;
      for (int a = 0; a < 10; ++a) for (int s = 0; s < 7; ++s) { double x = 0; for (int r = 0; r < 7; ++r) x += GG[a][r] * g[r * 7 + s]; t[a][s] = x; }
      for (int a = 0; a < 10; ++a) for (int b = 0; b < 10; ++b) { double x = 0; for (int s = 0; s < 7; ++s) x += GG[b][s] * t[a][s]; u[a][b] = x; }
      for (int p = 0; p < 100; ++p) U[((k / 16) * 100 + p) * 48 + c * 16 + k % 16] = (float)u[p / 10][p % 10];
    }
}
''')
# B^T d B for 16 tiles of tile row ty at once (lanes = tiles), from rows
# transposed to TR[y][x mod 4][c][x div 4]: a tap's 16 tiles are 16 floats in a row.
w(f'#define TXP {TXP}\n')
w('static void vchunk(const float *TR, long ty, long tx0, float *V) { /* V[100][3][16] */\n'
  '  const __m512 z = _mm512_setzero_ps(); float T[10][9][16] __attribute__((aligned(64)));\n'
  '  const float *rows[9]; int ok[9];\n'
  '  for (int i = 0; i < 9; ++i) { long y = 4 * ty - 3 + i; ok[i] = y >= 0 && y < 224; rows[i] = ok[i] ? TR + y * (12 * TXP) : TR; }\n'
  '  for (int c = 0; c < 3; ++c) {\n')
for j in range(9):
    for i in range(9):
        w(f'    const __m512 d{i}_{j} = ok[{i}] ? _mm512_loadu_ps(rows[{i}] + ({j % 4} * 3 + c) * TXP + tx0 + {j // 4}) : z;\n')
    for a in range(10):
        w(f'    _mm512_store_ps(T[{a}][{j}], {combo(BT[a], lambda i: f"d{i}_{j}")});\n')
for a in range(10):
    for j in range(9): w(f'    const __m512 t{a}_{j} = _mm512_load_ps(T[{a}][{j}]);\n')
    for b in range(10):
        w(f'    _mm512_store_ps(V + ({a * 10 + b} * 3 + c) * 16, {combo(BT[b], lambda j: f"t{a}_{j}")});\n')
w('  }\n}\n')
# NT tiles x one vector of K: 4*NT accumulators; per point 3 weight vectors,
# per tile 3 broadcasts and a product added to the outputs it reaches.
w('__attribute__((noinline)) static void group(const float *V, const float *U, long ty, long tx, float *out, int kv) {\n')
for t in range(NT):
    for q in range(4): w(f'  __m512 a{t}{q} = _mm512_setzero_ps();\n')
for p in range(100):
    a, b = divmod(p, 10)
    nz = [(q, s) for q, s in enumerate(AT[oy][a] * AT[ox][b] for oy in range(2) for ox in range(2)) if s]
    w(f'  {{ const float *u = U + {p * 48}; const __m512 w0 = _mm512_load_ps(u), w1 = _mm512_load_ps(u + 16), w2 = _mm512_load_ps(u + 32);\n')
    for t in range(NT):
        v = lambda c: f'_mm512_set1_ps(V[{(p * 3 + c) * 16 + t}])'
        if len(nz) == 1:  # one output: straight into its accumulator
            q, s = nz[0]
            f = '_mm512_fmadd_ps' if s == 1 else '_mm512_fnmadd_ps'
            for c in range(3): w(f'    a{t}{q} = {f}({v(c)}, w{c}, a{t}{q});\n')
        else:
            w(f'    {{ const __m512 m = _mm512_fmadd_ps({v(2)}, w2, _mm512_fmadd_ps({v(1)}, w1, _mm512_mul_ps({v(0)}, w0)));\n')
            for q, s in nz: w(f'      a{t}{q} = _mm512_{"add" if s == 1 else "sub"}_ps(a{t}{q}, m);\n')
            w('    }\n')
    w('  }\n')
for t in range(NT):
    for q in range(4):
        oy, ox = divmod(q, 2)
        w(f'  _mm512_storeu_ps(out + ((2 * ty + {oy}) * 112 + 2 * (tx + {t}) + {ox}) * 64 + kv * 16, a{t}{q});\n')
w('}\n')
w(f'''/* scratch: 224 * 12 * TXP + 4 * 4800 floats */
void proto(const float *in, const float *U, float *out, float *scratch) {{
  float *TR = scratch, *V = scratch + 224 * 12 * TXP; /* a tile row's V: [4][100][3][16] */
  for (long y = 0; y < 224; ++y)
    for (int m = 0; m < 4; ++m) for (int c = 0; c < 3; ++c) for (long tx = 0; tx < TXP; ++tx) {{
      const long x = 4 * tx + m - 3;
      TR[y * 12 * TXP + (m * 3 + c) * TXP + tx] = x >= 0 && x < 224 ? in[(y * 224 + x) * 3 + c] : 0.f;
    }}
  for (long ty = 0; ty < 56; ++ty) {{
    for (long tx0 = 0; tx0 < 56; tx0 += 16) vchunk(TR, ty, tx0, V + tx0 / 16 * 4800);
    for (int kv = 0; kv < 4; ++kv)
      for (long t = 0; t < 56; t += {NT}) group(V + t / 16 * 4800 + t % 16, U + kv * 4800, ty, t, out, kv);
  }}
}}
''')
if 16 % NT: sys.exit('gen.py: NT must divide 16 (a group must not straddle two 16-tile chunks)')
sys.stdout.write(''.join(o))
