// The GPU compute model (workload/compute_model): GEMM efficiency by size, memory-bound time.
#include <catch2/catch.hpp>

#include "test_support.h"
#include "workload/compute_model.h"
#include "workload/layer_ops.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("compute model: small GEMMs run far below peak, large ones near it", "[workload]") {
  GpuSpec gpu = a100_cluster(1).gpu;
  const ComputeModel cm(gpu, Precision::kBf16);
  const GemmShape big{8192, 8192, 8192, 1};
  const GemmShape small{64, 64, 64, 1};
  const double big_eff = big.flops() / cm.gemm_time(big) / cm.peak();
  const double small_eff = small.flops() / cm.gemm_time(small) / cm.peak();
  CHECK(big_eff > 0.6);
  CHECK(small_eff < 0.05);
  // Memory-bound kernels are timed by HBM bandwidth.
  CHECK(cm.memory_time(1e9) ==
        Approx(1e9 / (2039e9 * gpu.efficiency.memory) + gpu.efficiency.kernel_overhead_s));
}
