// The settings table (config/settings.h) for people and programs: `trident schema` prints
// these, and docs/schema.md is the markdown form (a test keeps them equal).
#ifndef TRIDENT_CONFIG_SETTINGS_DOC_H_
#define TRIDENT_CONFIG_SETTINGS_DOC_H_

#include <nlohmann/json.hpp>
#include <string>

namespace trident {

// Returns a list with one object per setting, in table order: key (full dotted path), section,
// type, unit (quantities: the dimension and accepted units), default, range, required, doc,
// megatron and hugging_face (absent when none).
nlohmann::json settings_json();

// Returns the markdown reference: one table per section with key, type, default, range, doc
// and the Megatron-LM / Hugging Face names. Deterministic.
std::string settings_markdown();

}  // namespace trident

#endif  // TRIDENT_CONFIG_SETTINGS_DOC_H_
