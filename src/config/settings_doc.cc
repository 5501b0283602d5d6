#include "config/settings_doc.h"

#include "config/settings.h"

namespace trident {
namespace {

std::string full_key(const SettingSection& section, const Setting& s) {
  return section.path.empty() ? s.key : section.path + "." + s.key;
}

std::string type_text(const Setting& s) {
  if (s.kind == SettingKind::kQuantity) {
    return std::string("quantity (") + dimension_name(s.dimension) + ")";
  }
  return setting_kind_name(s.kind);
}

// Markdown table cells cannot hold a bare '|'.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out;
}

std::string names(const Setting& s) {
  std::string out;
  if (!s.megatron.empty()) out += "Megatron-LM `" + s.megatron + "`";
  if (!s.hugging_face.empty()) {
    out += std::string(out.empty() ? "" : "; ") + "Hugging Face `" + s.hugging_face + "`";
  }
  return out;
}

}  // namespace

nlohmann::json settings_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const SettingSection& section : settings_sections()) {
    for (const Setting& s : section.settings) {
      nlohmann::json row;
      row["key"] = full_key(section, s);
      row["section"] = section.path;
      row["type"] = setting_kind_name(s.kind);
      if (s.kind == SettingKind::kQuantity) {
        row["unit"] = std::string(dimension_name(s.dimension)) + ": " + accepted_units(s.dimension);
      }
      row["default"] = s.default_text();
      row["range"] = s.range_text();
      row["required"] = s.required;
      row["doc"] = s.doc;
      if (!s.megatron.empty()) row["megatron"] = s.megatron;
      if (!s.hugging_face.empty()) row["hugging_face"] = s.hugging_face;
      out.push_back(std::move(row));
    }
  }
  return out;
}

std::string settings_markdown() {
  std::string out =
      "# Settings reference\n\n"
      "Every input setting trident reads, generated from its one settings table by "
      "`trident schema --format markdown` (a test fails when this file differs). Quantities "
      "carry their unit as a string (`300 GB/s`, `200 Gbps`, `2 us`, `80 GiB`, `312 TFLOPS`); a "
      "bare number in a quantity field is an error. Any setting of the cluster, model or plan "
      "can be changed from the command line with `--set section.key=value`, in a scenario's "
      "`overrides:` and as a sweep axis.\n";
  for (const SettingSection& section : settings_sections()) {
    out += "\n## " +
           (section.path.empty() ? std::string("Scenario file") : "`" + section.path + "`") +
           "\n\n" + section.doc + "\n\n";
    out += "| key | type | default | range | description | Megatron-LM / Hugging Face |\n";
    out += "|---|---|---|---|---|---|\n";
    for (const Setting& s : section.settings) {
      out += "| `" + s.key + "` | " + cell(type_text(s)) + " | " + cell(s.default_text()) + " | " +
             cell(s.range_text()) + " | " + cell(s.doc) + " | " + cell(names(s)) + " |\n";
    }
  }
  return out;
}

}  // namespace trident
