#include "cli/sweep_manifest.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/input_files.h"
#include "core/output_file.h"

namespace trident {
namespace {

std::string hex(std::uint64_t h) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : " ") + s;
  return out.empty() ? "(none)" : out;
}

ConfigError manifest_error(const std::string& file, const std::string& what) {
  SourceLocation where;
  where.file = file;
  return ConfigError(where, what);
}

}  // namespace

std::string SweepManifest::fingerprint() const {
  std::string all = std::to_string(points) + "\n" + fidelity + "\n";
  for (const auto& [path, hash] : files) all += "file " + path + " " + hash + "\n";
  for (const std::string& s : sets) all += "set " + s + "\n";
  for (const std::string& v : varies) all += "vary " + v + "\n";
  return hex(fnv1a64(all));
}

std::string manifest_path(const std::string& out) { return out + ".manifest"; }

std::string manifest_path_problem(const std::string& out) {
  const std::string path = manifest_path(out);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      return "its manifest '" + path +
             "' is a symbolic link (the sweep would write where it points); remove it or "
             "choose another --out";
    }
    if (!S_ISREG(st.st_mode)) {
      return "its manifest '" + path + "' exists and is not a regular file; choose another --out";
    }
    std::ifstream in(path, std::ios::binary);
    std::string text;
    // A manifest is small: a file much larger is not one, and is not read whole.
    if (in && st.st_size < (1 << 24)) text.assign(std::istreambuf_iterator<char>(in), {});
    try {
      parse_manifest(text, path);
    } catch (const ConfigError&) {
      return "'" + path +
             "' exists and is not a trident sweep manifest (the sweep would overwrite it); "
             "move it away or choose another --out";
    }
  }
  const std::string problem = output_path_problem(path);
  return problem.empty() ? "" : "its manifest FILE.manifest: " + problem;
}

SweepManifest current_manifest(long long points, int shard_index, int shard_count,
                               const std::vector<std::string>& sets,
                               const std::vector<std::string>& varies,
                               const std::string& fidelity) {
  SweepManifest m;
  m.points = points;
  m.shard_index = shard_index;
  m.shard_count = shard_count;
  for (const InputFile& f : recorded_input_files()) {
    std::error_code ec;
    std::string key = std::filesystem::absolute(f.path, ec).lexically_normal().string();
    if (ec) key = f.path;
    m.files[key] = hex(f.content_hash);
  }
  m.sets = sets;
  m.varies = varies;
  m.fidelity = fidelity;
  return m;
}

std::string manifest_json(const SweepManifest& m) {
  nlohmann::json j;
  j["trident_sweep_manifest"] = 1;
  j["points"] = m.points;
  j["shard"] = std::to_string(m.shard_index) + "/" + std::to_string(m.shard_count);
  j["fingerprint"] = m.fingerprint();
  j["files"] = m.files;
  j["sets"] = m.sets;
  j["varies"] = m.varies;
  j["fidelity"] = m.fidelity;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

SweepManifest parse_manifest(const std::string& text, const std::string& file) {
  SweepManifest m;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || j.value("trident_sweep_manifest", 0) != 1) {
      throw manifest_error(file, "not a trident sweep manifest");
    }
    m.points = j.at("points").get<long long>();
    const std::string shard = j.at("shard").get<std::string>();
    if (std::sscanf(shard.c_str(), "%d/%d", &m.shard_index, &m.shard_count) != 2 ||
        m.shard_count < 1 || m.shard_index < 0 || m.shard_index >= m.shard_count) {
      throw manifest_error(file, "bad shard '" + shard + "'");
    }
    m.files = j.at("files").get<std::map<std::string, std::string>>();
    m.sets = j.at("sets").get<std::vector<std::string>>();
    m.varies = j.at("varies").get<std::vector<std::string>>();
    m.fidelity = j.at("fidelity").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw manifest_error(file, std::string("not a trident sweep manifest: ") + e.what());
  }
  return m;
}

std::optional<SweepManifest> read_manifest(const std::string& out) {
  const std::string path = manifest_path(out);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode)) throw manifest_error(path, "not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw manifest_error(path, "cannot read it");
  return parse_manifest(std::string(std::istreambuf_iterator<char>(in), {}), path);
}

std::string manifest_differences(const SweepManifest& before, const SweepManifest& now) {
  if (before.fingerprint() == now.fingerprint()) return "";
  std::string d;
  auto add = [&](const std::string& what) { d += (d.empty() ? "" : "; ") + what; };
  for (const auto& [path, hash] : now.files) {
    const auto it = before.files.find(path);
    if (it == before.files.end()) {
      add("now reads " + path);
    } else if (it->second != hash) {
      add(path + " changed");
    }
  }
  for (const auto& [path, hash] : before.files) {
    if (!now.files.count(path)) add("no longer reads " + path);
  }
  if (before.sets != now.sets)
    add("--set was " + joined(before.sets) + ", now " + joined(now.sets));
  if (before.varies != now.varies) {
    add("--vary was " + joined(before.varies) + ", now " + joined(now.varies));
  }
  if (before.fidelity != now.fidelity) add("--fidelity changed");
  if (before.points != now.points) {
    add(std::to_string(before.points) + " points before, " + std::to_string(now.points) + " now");
  }
  return d.empty() ? "its inputs differ" : d;
}

}  // namespace trident
