#pragma once
// Where a front end's config comes from (a file or its text, with --set overrides and in-memory arrays), and
// the one function that loads it: what RunSpec (host/api/run.hpp), AuditSpec (host/api/audit.hpp) and
// `dpregret run` share.
#include <string>
#include <vector>

#include "host/config/config.hpp"
#include "host/engine/loss_file.hpp"

namespace dpr::api {

/// `config_path` loaded, or (when it is empty) `toml_text` parsed under the name `source_name`; with its
/// --set `overrides` and the `arrays` that path values may stand for.
struct ConfigSource {
    std::string config_path; ///< a config file (docs/CONFIG.md, docs/AUDITS.md), or
    std::string toml_text;   ///< its text (when config_path is empty), named `source_name` in messages
    std::string source_name = "<text>";
    std::vector<std::string> overrides; ///< "section.key=VALUE", as --set
    LossArrays arrays;                  ///< paths standing for arrays in memory (read in place)
};

/// The config `source` names, validated against `inputs` (host/api/pipeline.hpp run_config_inputs, or
/// host/api/audit.hpp audit_config_inputs). A config or loss-file error is a UsageError with its message.
config::Config load_config_for(const ConfigSource& source, const config::ConfigInputs& inputs);

} // namespace dpr::api
