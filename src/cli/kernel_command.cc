// trident kernel: the compute model's time and achieved throughput for one op on one GPU.
//   trident kernel --gpu h100-sxm5-80gb --precision fp8 gemm 8192 8192 8192
//   trident kernel --gpu b200 attention --batch 2 --seq 8192 --heads 64 --kv-heads 8
//                  --head-dim 128 --causal [--backward] [--backend flash|fused|flash2]
//   trident kernel --gpu gb200 memory "1 GiB"
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "config/diagnostics.h"
#include "config/references.h"
#include "config/scenario.h"
#include "core/units.h"
#include "workload/compute_model.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace trident {
namespace {

// Directories searched for a shipped GPU name: $TRIDENT_CONFIG_DIR/gpus, ./configs/gpus, the
// library's gpus (config/references.h: TRIDENT_PATH, the installed library, and the source
// tree's only for a program in its build tree).
std::vector<fs::path> gpu_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("TRIDENT_CONFIG_DIR")) dirs.push_back(fs::path(env) / "gpus");
  dirs.push_back(fs::path("configs") / "gpus");
  for (const std::string& dir : library_directories()) {
    dirs.push_back(fs::path(dir) / "gpus");
    dirs.push_back(fs::path(dir) / "configs" / "gpus");
  }
  return dirs;
}

// Returns the GPU file for `gpu`: a path to a file, else a shipped name ("h100-sxm5-80gb",
// with or without .yaml) or the unique shipped name it begins ("b200", "h100").
std::string find_gpu_file(const std::string& gpu) {
  std::error_code ec;
  if (fs::is_regular_file(gpu, ec)) return gpu;
  std::vector<std::string> names;
  for (const fs::path& dir : gpu_dirs()) {
    if (!fs::is_directory(dir, ec)) continue;
    const fs::path exact = dir / (gpu + ".yaml");
    if (fs::is_regular_file(exact, ec)) return exact.string();
    std::vector<fs::path> matches;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string stem = entry.path().stem().string();
      if (entry.path().extension() != ".yaml") continue;
      names.push_back(stem);
      if (stem.rfind(gpu, 0) == 0) matches.push_back(entry.path());
    }
    if (matches.size() == 1) return matches.front().string();
    if (matches.size() > 1) {
      std::string list;
      for (const fs::path& m : matches) list += (list.empty() ? "" : ", ") + m.stem().string();
      throw po::error("--gpu '" + gpu + "' is ambiguous (matches " + list + ")");
    }
    break;  // names from the first directory that exists
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw po::error("--gpu '" + gpu + "' is neither a file nor a shipped GPU (expected a path or " +
                  (list.empty() ? std::string("a name from configs/gpus/") : "one of: " + list) +
                  ")");
}

double positive_number(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1e12) {
    throw po::error(what + " must be a positive number, not '" + text + "'");
  }
  return v;
}

std::string tflops(double v) { return fmt::format("{:.1f} TFLOP/s", v / 1e12); }
std::string seconds(double s) {
  if (s >= 1e-3) return fmt::format("{:.4g} ms", s * 1e3);
  return fmt::format("{:.4g} us", s * 1e6);
}

// Returns the SM clock `text` names (quoted, boost, sustained or a frequency) / the clock the
// GPU's peaks are quoted at.
double clock_ratio(const GpuSpec& gpu, const std::string& text) {
  const GpuClocks& c = gpu.clocks;
  if (text == "quoted") return 1.0;
  if (c.quoted_hz <= 0) {
    throw po::error("--clock " + text + ": GPU " + gpu.name + " declares no clocks");
  }
  double hz = 0;
  if (text == "boost") {
    hz = c.boost_hz;
  } else if (text == "sustained") {
    hz = c.sustained_hz;
  } else {
    std::string error;
    const auto f = parse_quantity(text, Dimension::kFrequency, &error);
    if (!f) throw po::error("--clock: " + error + " (or quoted, boost, sustained)");
    hz = *f;
  }
  if (hz <= 0) throw po::error("--clock " + text + ": GPU " + gpu.name + " gives no such clock");
  return hz / c.quoted_hz;
}

}  // namespace

int run_kernel_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: trident kernel --gpu GPU [--precision P] OP ARGS... [options]\n\n"
      "Prints the compute model's time and achieved throughput for one kernel on one GPU:\n"
      "  gemm M N K [--batch B]      C[M,N] = A[M,K] B[K,N] (B times)\n"
      "  attention --seq S --heads H [--kv-heads G] [--head-dim D] [--batch B] [--causal]\n"
      "            [--backward] [--backend flash|fused|flash2]   one fused-attention kernel\n"
      "  memory BYTES                a memory-bound kernel moving BYTES (e.g. \"1 GiB\")\n"
      "GPU is a file or a shipped name from configs/gpus/ (a unique prefix will do: h100, b200).\n"
      "Tensor-core kernels run at the clock the peaks are quoted at unless --clock says otherwise\n"
      "(the GPU file's clocks: boost for short benchmarks, sustained for what a training step\n"
      "holds at the power limit, or e.g. \"1500 MHz\"); memory-bound kernels do not scale.\n"
      "Exit code 2 on bad input.\n\noptions");
  std::string gpu_name, precision_text = "bf16", backend_text = "fused", format = "table";
  std::string clock_text = "quoted";
  std::string batch_text, seq_text, heads_text, kv_text, hd_text = "128";
  bool causal = false, backward = false;
  opts.add_options()("help,h", "show this help")("gpu", po::value(&gpu_name),
                                                 "GPU file or shipped GPU name (required)")(
      "precision", po::value(&precision_text), "bf16 (default), fp16, fp8 or fp4")(
      "backend", po::value(&backend_text),
      "attention: fused (cuDNN, default), flash or flash2 (PyTorch SDPA's FlashAttention-2)")(
      "batch", po::value(&batch_text), "gemm: batch count; attention: batch size (default 1)")(
      "seq", po::value(&seq_text), "attention: sequence length")("heads", po::value(&heads_text),
                                                                 "attention: query heads")(
      "kv-heads", po::value(&kv_text), "attention: key/value heads (default = heads)")(
      "head-dim", po::value(&hd_text), "attention: head dimension (default 128)")(
      "causal", po::bool_switch(&causal), "attention: causal mask")(
      "backward", po::bool_switch(&backward), "attention: the backward kernel")(
      "clock", po::value(&clock_text), "quoted (default), boost, sustained or a frequency")(
      "format", po::value(&format), "table (default) or json");
  std::vector<std::string> pos;
  po::variables_map vm;
  if (!parse_command_line(args, opts, -1, "missing OP (expected gemm, attention or memory)", &pos,
                          &vm)) {
    return 0;
  }
  if (gpu_name.empty()) throw po::error("missing --gpu (expected a GPU file or shipped name)");
  if (format != "table" && format != "json") {
    throw po::error("--format must be table or json, not '" + format + "'");
  }
  Precision precision{};
  if (!parse_precision(precision_text, &precision)) {
    throw po::error("--precision must be bf16, fp16, fp8 or fp4, not '" + precision_text + "'");
  }
  AttentionBackend backend{};
  if (!parse_attention_backend(backend_text, &backend) ||
      (backend != AttentionBackend::kFlash && backend != AttentionBackend::kFused &&
       backend != AttentionBackend::kFlash2)) {
    throw po::error("--backend must be fused, flash or flash2, not '" + backend_text + "'");
  }

  const std::string file = find_gpu_file(gpu_name);
  Diagnostics diag;
  const CheckedConfigFile checked = check_config_file(file, {}, &diag);
  if (!diag.empty() || !checked.kind || *checked.kind != ConfigFileKind::kGpu) {
    for (const Problem& p : diag.problems()) std::cerr << p.text() << "\n";
    if (diag.empty()) std::cerr << "trident kernel: " << file << " is not a GPU file\n";
    return 2;
  }
  GpuSpec gpu = checked.specs.cluster.gpu;
  const double clock = clock_ratio(gpu, clock_text);
  if (gpu.peak_flops.count(precision) == 0) {
    std::string have;
    for (const auto& kv : gpu.peak_flops) {
      have += (have.empty() ? "" : ", ") + std::string(precision_name(kv.first));
    }
    throw po::error(std::string("GPU ") + gpu.name + " has no " + precision_name(precision) +
                    " peak (it has: " + have + ")");
  }
  const double peak = gpu.peak_flops.at(precision);
  // Tensor-core throughput scales with the SM clock: run the model on peaks at that clock.
  for (auto& kv : gpu.peak_flops) kv.second *= clock;
  const ComputeModel cm(gpu, precision);
  const std::string& op = pos.front();

  nlohmann::ordered_json j;
  j["gpu"] = gpu.name;
  j["precision"] = precision_name(precision);
  j["op"] = op;
  j["clock_ratio"] = clock;
  std::string what, rate;
  double time = 0, flops = 0, bytes = 0, fraction = 0;
  if (op == "gemm") {
    if (pos.size() != 4) throw po::error("gemm takes M N K (e.g. gemm 8192 8192 8192)");
    const double batch = batch_text.empty() ? 1 : positive_number(batch_text, "--batch");
    const GemmShape g{positive_number(pos[1], "M"), positive_number(pos[2], "N"),
                      positive_number(pos[3], "K"), batch};
    time = cm.gemm_time(g, precision);
    flops = g.flops();
    fraction = flops / time / peak;
    what = fmt::format("gemm {} x {} x {}{}", pos[1], pos[2], pos[3],
                       batch != 1 ? fmt::format(" (batch {})", batch) : "");
    j["m"] = g.m, j["n"] = g.n, j["k"] = g.k, j["batch"] = g.batch;
    j["gemm_efficiency"] = cm.gemm_efficiency(g, precision);
    j["wave_efficiency"] = cm.wave_efficiency(g);
  } else if (op == "attention") {
    if (pos.size() != 1) throw po::error("attention takes options only (--seq, --heads, ...)");
    if (seq_text.empty() || heads_text.empty()) {
      throw po::error("attention needs --seq and --heads");
    }
    AttentionShape a;
    a.batch = batch_text.empty() ? 1 : positive_number(batch_text, "--batch");
    a.s = positive_number(seq_text, "--seq");
    a.heads = positive_number(heads_text, "--heads");
    a.kv_heads = kv_text.empty() ? a.heads : positive_number(kv_text, "--kv-heads");
    a.head_dim = positive_number(hd_text, "--head-dim");
    a.causal = causal;
    if (std::fmod(a.heads, a.kv_heads) != 0) {
      throw po::error("--kv-heads must divide --heads");
    }
    time = cm.attention_time(a, backend, precision, backward);
    flops = a.flops(backward);
    fraction = flops / time / peak;
    what = fmt::format("attention {} (batch {}, seq {}, heads {}/{} kv, head dim {}{})",
                       backward ? "backward" : "forward", a.batch, a.s, a.heads, a.kv_heads,
                       a.head_dim, causal ? ", causal" : "");
    j["backend"] = attention_backend_name(backend);
    j["backward"] = backward;
    j["batch"] = a.batch, j["seq"] = a.s, j["heads"] = a.heads, j["kv_heads"] = a.kv_heads;
    j["head_dim"] = a.head_dim, j["causal"] = causal;
  } else if (op == "memory") {
    if (pos.size() != 2) throw po::error("memory takes BYTES (e.g. memory \"1 GiB\")");
    std::string error;
    const auto b = parse_quantity(pos[1], Dimension::kBytes, &error);
    if (!b || *b <= 0) throw po::error("memory BYTES: " + (error.empty() ? "must be > 0" : error));
    bytes = *b;
    time = cm.memory_time(bytes);
    what = "memory-bound kernel moving " + pos[1];
    j["bytes"] = bytes;
  } else {
    throw po::error("unknown OP '" + op + "' (expected gemm, attention or memory)");
  }
  j["time_s"] = time;
  if (bytes > 0) {
    j["achieved_bytes_per_s"] = bytes / time;
    j["fraction_of_hbm_bandwidth"] = bytes / time / gpu.memory_bandwidth;
    rate = fmt::format("{:.0f} GB/s ({:.1f} % of {:.0f} GB/s HBM)", bytes / time / 1e9,
                       100 * bytes / time / gpu.memory_bandwidth, gpu.memory_bandwidth / 1e9);
  } else {
    j["flops"] = flops;
    j["achieved_flops_per_s"] = flops / time;
    j["fraction_of_peak"] = fraction;
    j["peak_flops_per_s"] = peak;
    rate = fmt::format("{} ({:.1f} % of the {} dense peak, {})", tflops(flops / time),
                       100 * fraction, precision_name(precision), tflops(peak));
  }
  if (format == "json") {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("trident kernel: {} on {} ({}{})\n", what, gpu.name,
                           precision_name(precision),
                           (op == "attention" ? ", " + backend_text : std::string()) +
                               (clock_text != "quoted" ? ", clock " + clock_text : std::string()));
  std::cout << fmt::format("  {:<12}{}\n", "time", seconds(time));
  if (flops > 0) std::cout << fmt::format("  {:<12}{:.4g} GFLOP\n", "FLOPs", flops / 1e9);
  std::cout << fmt::format("  {:<12}{}\n", "achieved", rate);
  return 0;
}

}  // namespace trident
