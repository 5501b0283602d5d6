#include "config/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace trident {

int edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment: insertions, deletions, substitutions and adjacent swaps.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

namespace {

std::string lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string w = lower(word);
  std::string best;
  int best_score = 1 << 30;
  int best_distance = 1 << 30;
  for (const std::string& c : candidates) {
    const std::string lc = lower(c);
    const int distance = edit_distance(w, lc);
    int score = distance;
    // An abbreviation ("tensor" for "tensor_parallel") counts as close.
    if (w.size() >= 3 && lc.compare(0, w.size(), w) == 0) score = std::min(score, 1);
    if (score < best_score || (score == best_score && distance < best_distance)) {
      best_score = score;
      best_distance = distance;
      best = c;
    }
  }
  const int limit = std::max<int>(1, static_cast<int>(word.size()) / 3);
  return best_score <= limit ? best : "";
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out;
}

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string best = closest_match(word, candidates);
  if (!best.empty()) return "did you mean `" + best + "`?";
  return "expected one of: " + join_names(candidates);
}

}  // namespace trident
