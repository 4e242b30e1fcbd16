// "Did you mean" suggestions for unknown keys, sections and choice values (docs/CONFIG.md).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "host/config/config.hpp"

namespace dpr::config {

std::size_t levenshtein(std::string_view a, std::string_view b) {
    // One row of the dynamic-programming table: row[j] = distance(a[0..i), b[0..j)).
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0u : 1u)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

namespace {
std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
} // namespace

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    const std::string w = lower(word);
    const std::size_t limit = std::max<std::size_t>(2, w.size() / 3);
    std::string best;
    std::size_t best_distance = static_cast<std::size_t>(-1);
    for (const std::string& c : candidates) {
        const std::size_t dist = levenshtein(w, lower(c));
        if (dist < best_distance) best_distance = dist, best = c;
    }
    if (best_distance <= limit && best_distance < w.size()) return best;
    return "";
}

} // namespace dpr::config
