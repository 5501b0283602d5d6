// The GPU compute model (workload/compute_model): GEMM efficiency by size, memory-bound time,
// and the fitted compute model of every shipped GPU against the published kernel measurements it
// was fitted on (tests/data/kernel_reference.csv, written by scripts/fit_compute_model.py from
// the sources listed there; docs/calibration.md states the tolerances checked here).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "config/diagnostics.h"
#include "config/scenario.h"
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

namespace {

struct Point {
  std::string table, gpu_file, precision, op, backend;
  bool backward = false, causal = false, fitted = true;
  double m = 0, n = 0, k = 0, batch = 1, heads = 0, seq = 0, head_dim = 0;
  double measured = 0, predicted = 0;
  double clock_ratio = 1;  // the SM clock the measurement ran at / the peaks' quoted clock
};

// Splits one CSV line; a field in double quotes may hold commas.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::vector<Point> reference_points() {
  std::ifstream in(source_path("tests/data/kernel_reference.csv"));
  REQUIRE(in.good());
  std::vector<Point> out;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    const std::vector<std::string> f = csv_fields(line);
    REQUIRE(f.size() == 18);
    Point p;
    p.table = f[0];
    p.gpu_file = f[1];
    p.precision = f[2];
    p.op = f[3];
    p.backend = f[4];
    p.backward = f[5] == "1";
    p.m = std::stod(f[6]);
    p.n = std::stod(f[7]);
    p.k = std::stod(f[8]);
    p.batch = std::stod(f[9]);
    p.heads = std::stod(f[10]);
    p.seq = std::stod(f[11]);
    p.head_dim = std::stod(f[12]);
    p.causal = f[13] == "1";
    p.measured = std::stod(f[14]);
    p.predicted = std::stod(f[15]);
    p.fitted = f[16] == "1";
    p.clock_ratio = std::stod(f[17]);
    out.push_back(p);
  }
  return out;
}

GpuSpec shipped_gpu(const std::string& file) {
  Diagnostics diag;
  const CheckedConfigFile c = check_config_file(source_path("configs/gpus/" + file), {}, &diag);
  REQUIRE(diag.empty());
  return c.specs.cluster.gpu;
}

// Returns the C++ model's TFLOP/s for the point on its shipped GPU file, at the clock the point
// ran at: tensor-core throughput scales with the SM clock, so the peaks scale with it.
double model_tflops(const Point& p, GpuSpec gpu) {
  Precision prec{};
  REQUIRE(parse_precision(p.precision, &prec));
  for (auto& [precision, peak] : gpu.peak_flops) peak *= p.clock_ratio;
  const ComputeModel cm(gpu, prec);
  if (p.op == "gemm") {
    const GemmShape g{p.m, p.n, p.k, p.batch};
    return g.flops() / cm.gemm_time(g, prec) / 1e12;
  }
  AttentionBackend backend{};
  REQUIRE(parse_attention_backend(p.backend, &backend));
  const AttentionShape a{p.batch, p.heads, p.heads, p.seq, p.head_dim, p.causal};
  return a.flops(p.backward) / cm.attention_time(a, backend, prec, p.backward) / 1e12;
}

}  // namespace

TEST_CASE("the C++ compute model reproduces the fit script's predictions", "[compute_model]") {
  std::map<std::string, GpuSpec> gpus;
  const std::vector<Point> points = reference_points();
  REQUIRE(points.size() > 200);
  for (const Point& p : points) {
    if (!gpus.count(p.gpu_file)) gpus[p.gpu_file] = shipped_gpu(p.gpu_file);
    INFO(p.table << " " << p.op << " " << p.m << "x" << p.n << "x" << p.k << " s=" << p.seq);
    // The GPU files round parameters to 3-4 digits.
    CHECK(model_tflops(p, gpus.at(p.gpu_file)) == Approx(p.predicted).epsilon(0.01));
  }
}

TEST_CASE("every fitted reference table is reproduced within the stated tolerance",
          "[compute_model][calibration]") {
  // docs/calibration.md: mean absolute error <= 16 % and every point within 45 % per fitted
  // table (all but one table are within 8 % mean).
  std::map<std::string, GpuSpec> gpus;
  std::map<std::string, std::vector<double>> errors;
  for (const Point& p : reference_points()) {
    if (!p.fitted) continue;
    if (!gpus.count(p.gpu_file)) gpus[p.gpu_file] = shipped_gpu(p.gpu_file);
    errors[p.table].push_back(std::abs(model_tflops(p, gpus.at(p.gpu_file)) / p.measured - 1));
  }
  REQUIRE(errors.size() >= 9);
  for (const auto& [table, errs] : errors) {
    double sum = 0, worst = 0;
    for (double e : errs) {
      sum += e;
      worst = std::max(worst, e);
    }
    INFO(table << ": mean " << 100 * sum / errs.size() << " %, max " << 100 * worst << " %");
    CHECK(sum / errs.size() < 0.16);
    CHECK(worst < 0.45);
  }
}

TEST_CASE("large GEMMs approach the fitted fraction, small ones ramp and quantize",
          "[compute_model]") {
  const GpuSpec h100 = shipped_gpu("h100-sxm5-80gb.yaml");
  const ComputeModel cm(h100, Precision::kBf16);
  const GemmShape big{16384, 16384, 16384, 1};
  const double eff = big.flops() / cm.gemm_time(big) / cm.peak();
  CHECK(eff == Approx(h100.efficiency.gemm).epsilon(0.03));
  // FP8 runs at the FP8 curve: per clock, power-saturated cuBLAS FP8 does 1288.7 TFLOPS at
  // 1374 MHz and BF16 708.5 at 1465 MHz on the H200 (stas00/ml-engineering MSMF), 1.94 x.
  const double fp8 = big.flops() / cm.gemm_time(big, Precision::kFp8);
  CHECK(fp8 / (big.flops() / cm.gemm_time(big)) ==
        Approx((1288.7 / 1374) / (708.5 / 1465)).epsilon(0.05));
  // One more tile than the SMs hold: the second wave is almost empty.
  const GemmShape full{128 * 12, 128 * 11, 8192, 1};  // 132 tiles: one full wave
  const GemmShape spill{128 * 19, 128 * 7, 8192, 1};  // 133 tiles: two waves
  CHECK(cm.wave_efficiency(full) == Approx(1.0));
  CHECK(cm.wave_efficiency(spill) == Approx(133.0 / 264));
}

TEST_CASE("fused attention: causal runs half the FLOPs, longer sequences run faster",
          "[compute_model][attention]") {
  const GpuSpec h100 = shipped_gpu("h100-sxm5-80gb.yaml");
  const ComputeModel cm(h100, Precision::kBf16);
  const AttentionShape full{2, 64, 8, 8192, 128, false};
  AttentionShape causal = full;
  causal.causal = true;
  CHECK(causal.flops(false) == Approx(full.flops(false) / 2));
  CHECK(full.flops(true) == Approx(2.5 * full.flops(false)));
  // Megatron-LM counts the causal scores halved too, and the backward as twice the forward.
  CHECK(causal.model_flops(false) == Approx(full.flops(false) / 2));
  CHECK(causal.model_flops(true) == Approx(full.flops(false)));
  const double t_full = cm.attention_time(full, AttentionBackend::kFused, Precision::kBf16, false);
  const double t_causal =
      cm.attention_time(causal, AttentionBackend::kFused, Precision::kBf16, false);
  CHECK(t_causal < t_full);
  CHECK(t_causal > 0.5 * t_full);  // the diagonal tiles cost more than half
  AttentionShape shorter = full;
  shorter.s = 1024;
  shorter.batch = 16;
  CHECK(cm.attention_efficiency(shorter, AttentionBackend::kFlash, Precision::kBf16, false) <
        cm.attention_efficiency(full, AttentionBackend::kFlash, Precision::kBf16, false));
}

TEST_CASE("B200 FP8 attention backward is not slower than the H100's",
          "[compute_model][attention]") {
  // Llama-style shapes (head dim 128, GQA) from 4k to 32k tokens, causal and not, both fused
  // backends. (FlashAttention-4's causal forward, measured, is slow below 4k tokens: with its
  // causal term a B200 flash causal backward of 1-2k tokens stays slower than the H100's.)
  const ComputeModel h100(shipped_gpu("h100-sxm5-80gb.yaml"), Precision::kFp8);
  const ComputeModel b200(shipped_gpu("b200.yaml"), Precision::kFp8);
  for (AttentionBackend backend : {AttentionBackend::kFused, AttentionBackend::kFlash}) {
    for (double s : {4096.0, 8192.0, 16384.0, 32768.0}) {
      for (bool causal : {true, false}) {
        AttentionShape a{1, 8, 1, s, 128, causal};
        a.batch = 32768 / s;
        CAPTURE(static_cast<int>(backend), s, causal);
        CHECK(b200.attention_time(a, backend, Precision::kFp8, true) <=
              h100.attention_time(a, backend, Precision::kFp8, true));
      }
    }
  }
}
