// The precision-aware optimizer's state dtypes and FP8 primary weights (workload/stage_work):
// optimizer memory, the fp32 main-gradient copy, the Adam update's HBM traffic, the weights
// kept and the bytes the distributed optimizer gathers follow the dtypes exactly.
#include <catch2/catch.hpp>

#include "test_support.h"
#include "workload/compute_model.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

Scenario gpt3_zero1() {
  Scenario sc = scenario(a100_cluster(128), gpt_model(96, 12288, 96, 2048, 51200),
                         plan(8, 8, 16, 1, 96, ScheduleKind::k1F1B));
  sc.plan.distributed_optimizer = true;
  sc.plan.dp_sharding = DpSharding::kOptim;
  return sc;
}

}  // namespace

TEST_CASE("optimizer state: bf16 moments and fp16 master weights shrink it by their bytes",
          "[workload][memory]") {
  Scenario sc = gpt3_zero1();
  const Workload fp32 = build_workload(sc);
  const double params = fp32.stages[2].params_per_gpu;
  // 4 B master + 4 B + 4 B moments, sharded over d = 16.
  CHECK(fp32.stages[2].memory.optimizer == Approx(params * 12 / 16).epsilon(1e-12));
  sc.plan.precision_aware_optimizer = true;
  sc.plan.exp_avg_dtype = sc.plan.exp_avg_sq_dtype = StateDtype::kBf16;
  // The fp32 master is stored as the 16 bits the bf16 parameter lacks (D5) unless turned off.
  CHECK(build_workload(sc).stages[2].memory.optimizer == Approx(params * 6 / 16).epsilon(1e-12));
  sc.plan.store_param_remainders = false;
  CHECK(build_workload(sc).stages[2].memory.optimizer == Approx(params * 8 / 16).epsilon(1e-12));
  sc.plan.main_params_dtype = StateDtype::kFp16;
  sc.plan.exp_avg_sq_dtype = StateDtype::kFp8;
  CHECK(build_workload(sc).stages[2].memory.optimizer == Approx(params * 5 / 16).epsilon(1e-12));
}

TEST_CASE("optimizer state: the Adam update reads and writes the state in its dtypes",
          "[workload]") {
  Scenario sc = gpt3_zero1();
  const double fp32 = build_workload(sc).stages[2].optimizer_s;
  sc.plan.precision_aware_optimizer = true;
  sc.plan.exp_avg_dtype = sc.plan.exp_avg_sq_dtype = StateDtype::kBf16;
  sc.plan.main_grads_dtype = StateDtype::kBf16;
  // The fp32 master kept as a 2 B remainder of the bf16 weight (D5): 2 × (2 + 2 + 2) read and
  // written, 2 B of main gradient read, 2 B of weights written and 2 B of weights read to
  // rebuild the master: 18 B against 2 × 12 + 4 + 2 = 30 B (an HBM-bound kernel, overhead
  // aside).
  const double narrow = build_workload(sc).stages[2].optimizer_s;
  CHECK(narrow < fp32);
  const ComputeModel cm(sc.cluster.gpu, sc.plan.precision);
  const double params = build_workload(sc).stages[2].params_per_gpu / 16;
  CHECK(fp32 - narrow == Approx(cm.memory_time(params * 30) - cm.memory_time(params * 18)));
}

TEST_CASE("optimizer state: bf16 main gradients drop the fp32 copy of a bf16 reduction",
          "[workload][memory]") {
  Scenario sc = gpt3_zero1();
  sc.plan.grad_reduce_in_bf16 = true;
  const Workload copy = build_workload(sc);
  const double params = copy.stages[2].params_per_gpu;
  sc.plan.precision_aware_optimizer = true;
  sc.plan.main_grads_dtype = StateDtype::kBf16;
  const Workload none = build_workload(sc);
  // The fp32 copy exists during the optimizer step only (Megatron's distributed optimizer makes
  // it in step() and drops it at zero_grad), when the activations are gone: here it is smaller
  // than them, so the peak does not grow.
  CHECK(copy.stages[2].memory.step_main_grads - none.stages[2].memory.step_main_grads ==
        Approx(params * 4 / 16).epsilon(1e-12));
  CHECK(copy.stages[2].memory.step_main_grads < copy.stages[2].memory.activations);
  CHECK(copy.stages[2].memory.gradients == Approx(params * 2).epsilon(1e-12));
  CHECK(none.stages[2].memory.gradients == Approx(params * 2).epsilon(1e-12));
}

TEST_CASE("fp8_param_gather: weights only in FP8, gathered in FP8", "[workload][memory]") {
  Scenario sc = gpt3_zero1();
  sc.cluster.gpu.architecture = GpuArchitecture::kHopper;
  sc.cluster.gpu.peak_flops[Precision::kFp8] = 2 * sc.cluster.gpu.peak_flops.at(Precision::kBf16);
  sc.plan.precision = Precision::kFp8;
  sc.plan.fp8_recipe = Fp8Recipe::kBlockwise;
  const Workload dual = build_workload(sc);
  const double params = dual.stages[2].params_per_gpu;
  // Hopper keeps the 16-bit weights and both FP8 layouts with a scale per 128 x 128 block.
  const double fp8 = 2 * (1 + 4.0 / (128 * 128));
  CHECK(dual.stages[2].memory.weights == Approx(params * (2 + fp8)).epsilon(1e-12));
  CHECK(dual.stages[2].param_gather_bytes == Approx(params * 2).epsilon(1e-12));
  sc.plan.fp8_param_gather = true;
  const Workload only = build_workload(sc);
  CHECK(only.stages[2].memory.weights == Approx(params * fp8).epsilon(1e-12));
  CHECK(only.stages[2].param_gather_bytes ==
        Approx(params * (1 + 4.0 / (128 * 128))).epsilon(1e-12));
}
