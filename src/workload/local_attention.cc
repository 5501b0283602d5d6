#include "workload/local_attention.h"

#include <algorithm>
#include <cmath>

namespace trident {
namespace {

// Pairs of the first x queries: sum_{i < x} min(i + 1, w) (the closed form NeMo's
// gpt_oss_flops_calculator uses: w (w + 1) / 2 + (x - w) w once x >= w).
double window_prefix(double x, double w) {
  if (x <= w) return x * (x + 1) / 2;
  return w * (w + 1) / 2 + (x - w) * w;
}

// Pairs of the first x queries in chunks of c: sum_{i < x} (i mod c) + 1.
double chunk_prefix(double x, double c) {
  const double whole = std::floor(x / c), rest = x - whole * c;
  return whole * c * (c + 1) / 2 + rest * (rest + 1) / 2;
}

double prefix(double x, double window, double chunk) {
  if (window > 0) return window_prefix(x, window);
  if (chunk > 0) return chunk_prefix(x, chunk);
  return x * (x + 1) / 2;
}

}  // namespace

double local_pairs(double first, double n, double window, double chunk) {
  return prefix(first + n, window, chunk) - prefix(first, window, chunk);
}

void apply_layer_attention(const ModelSpec& model, int layer, LayerDims* d) {
  const double seq = model.seq_length;
  const double w = model.layer_window(layer), c = model.layer_chunk(layer);
  d->window = w > 0 && w < seq ? w : 0;
  d->chunk = c > 0 && c < seq ? c : 0;
  d->rope = model.layer_rope(layer);
}

double layer_local_pairs(const LayerDims& d, LocalPart part) {
  if (d.window <= 0 && d.chunk <= 0) return 0;
  if (part == LocalPart::kWhole) return local_pairs(0, d.cp * d.s, d.window, d.chunk);
  // Rank r holds chunks r and 2cp-1-r of s/2 tokens (cp_attention.h); the busiest one sets the
  // all-gather attention's time.
  const double half = d.s / 2;
  const int cp = static_cast<int>(d.cp);
  double worst = 0;
  for (int r = 0; r < cp; ++r) {
    const double pairs = local_pairs(r * half, half, d.window, d.chunk) +
                         local_pairs((2 * cp - 1 - r) * half, half, d.window, d.chunk);
    worst = std::max(worst, pairs);
  }
  return worst;
}

}  // namespace trident
