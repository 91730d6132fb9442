/*
 * decision_json.h - a decision on a line as JSON: the one form that
 * `agentgate explain --json` and the agent protocols' explain print, and
 * whose decision, reason, rule and rule_label the audit's command records
 * carry for the same line.
 */
#ifndef AG_DECISION_JSON_H
#define AG_DECISION_JSON_H

#include "common/config.h"
#include "policy/policy.h"

struct json_object;

/*
 * { decision, reason, rule, rule_label (where a profile rule decided),
 * parse_error, incomplete, commands: [{ name, path, text, subcommand (where
 * known), verdict, reason, rule, rule_label, offset }] }, and would_run:
 * true where the profile's rollout lets a refusal run.  cfg gives the
 * rules' labels.  A new json-c object, or NULL when out of memory.
 */
struct json_object *ag_decision_json(const struct ag_decision *d, const struct ag_config *cfg);

#endif
