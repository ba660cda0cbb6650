package attractor

// Rule ids. They are a user contract: people filter on them and
// docs/rules.md documents each one (a test keeps the two in sync).
const (
	RuleSyntax               = "syntax"
	RuleAttrType             = "attr_type"
	RuleAttrKnown            = "attr_known"
	RuleAttrAlias            = "attr_alias"
	RuleDurationUnit         = "duration_unit"
	RuleStartNode            = "start_node"
	RuleTerminalNode         = "terminal_node"
	RuleStartNoIncoming      = "start_no_incoming"
	RuleExitNoOutgoing       = "exit_no_outgoing"
	RuleEdgeTargetExists     = "edge_target_exists"
	RuleReachability         = "reachability"
	RuleConditionSyntax      = "condition_syntax"
	RuleConditionContextKey  = "condition_context_key"
	RuleOutcomeCustom        = "outcome_custom"
	RuleStylesheetSyntax     = "stylesheet_syntax"
	RuleShapeKnown           = "shape_known"
	RuleShapeAgent           = "shape_agent"
	RuleExitReachable        = "exit_reachable"
	RuleTypeKnown            = "type_known"
	RuleHandlerSupported     = "handler_supported"
	RuleToolCommandMissing   = "tool_command_missing"
	RuleVerifyCommandMissing = "verify_command_missing"
	RuleRetryTargetExists    = "retry_target_exists"
	RuleGoalGateHasRetry     = "goal_gate_has_retry"
	RulePromptOnLLMNodes     = "prompt_on_llm_nodes"
	RulePromptOnConditional  = "prompt_on_conditional"
	RuleFailLoopGuard        = "fail_loop_failure_class_guard"
	RuleFailPathMissing      = "fail_path_missing"
	RuleDurationUnrenderable = "duration_unrenderable"
	RuleFidelityValid        = "fidelity_valid"
	RuleParallelTolerates    = "parallel_tolerates_failure"
	RuleParallelWaitAll      = "parallel_wait_all"
	RuleDialectAlias         = "dialect_alias"
	RuleDialectForeign       = "dialect_foreign"
	RuleManagerChild         = "manager_child"
	RuleManagerLoop          = "manager_loop"
)

// RuleInfo describes one rule.
type RuleInfo struct {
	ID       string
	Severity Severity
	Summary  string
}

// Rules lists every rule Load and Validate can emit, in documentation
// order.
func Rules() []RuleInfo {
	return []RuleInfo{
		{RuleSyntax, SeverityError, "the file must parse as one Attractor digraph"},
		{RuleAttrType, SeverityError, "typed attributes must hold a value of their type"},
		{RuleAttrKnown, SeverityWarning, "attributes are ones the engine reads (or Graphviz draws)"},
		{RuleAttrAlias, SeverityWarning, "attributes use our spelling, not another engine's"},
		{RuleDurationUnit, SeverityWarning, "durations carry a unit"},
		{RuleStartNode, SeverityError, "exactly one start node"},
		{RuleTerminalNode, SeverityError, "at least one exit node"},
		{RuleStartNoIncoming, SeverityError, "the start node has no incoming edges"},
		{RuleExitNoOutgoing, SeverityError, "exit nodes have no outgoing edges"},
		{RuleEdgeTargetExists, SeverityError, "both ends of every edge are declared nodes"},
		{RuleReachability, SeverityError, "every node is reachable from the start node"},
		{RuleExitReachable, SeverityError, "every node can reach an exit"},
		{RuleConditionSyntax, SeverityError, "edge conditions parse"},
		{RuleConditionContextKey, SeverityWarning, "context keys in conditions are written context.KEY"},
		{RuleOutcomeCustom, SeverityWarning, "a custom outcome in a condition is not a misspelt status"},
		{RuleStylesheetSyntax, SeverityError, "model_stylesheet parses"},
		{RuleShapeKnown, SeverityError, "a node shape is not a misspelt one of ours"},
		{RuleShapeAgent, SeverityWarning, "node shapes map to a handler of their own"},
		{RuleTypeKnown, SeverityWarning, "node types name a registered handler"},
		{RuleHandlerSupported, SeverityError, "no node needs a handler the engine does not support yet"},
		{RuleManagerChild, SeverityError, "a manager loop (house) names a child pipeline inside the repository that loads"},
		{RuleManagerLoop, SeverityWarning, "a manager loop's settings do what they say"},
		{RuleToolCommandMissing, SeverityError, "tool nodes have a tool_command"},
		{RuleVerifyCommandMissing, SeverityError, "verify nodes have a command"},
		{RuleRetryTargetExists, SeverityWarning, "retry targets name declared nodes"},
		{RuleGoalGateHasRetry, SeverityWarning, "goal gates have somewhere to retry"},
		{RulePromptOnLLMNodes, SeverityWarning, "codergen nodes have a prompt or label"},
		{RulePromptOnConditional, SeverityWarning, "conditional nodes have no prompt"},
		{RuleFailLoopGuard, SeverityWarning, "a failure loop has a bound besides run_timeout"},
		{RuleFailPathMissing, SeverityWarning, "a failed outcome has somewhere to go"},
		{RuleDurationUnrenderable, SeverityInfo, "durations are quoted so Graphviz can render the file"},
		{RuleFidelityValid, SeverityWarning, "fidelity modes are known"},
		{RuleParallelTolerates, SeverityWarning, "a parallel node that tolerates failing branches says so"},
		{RuleParallelWaitAll, SeverityInfo, "a failing branch fails the run where other engines go on"},
		{RuleDialectAlias, SeverityWarning, "another engine's construct that means the same here is written our way"},
		{RuleDialectForeign, SeverityError, "no construct of another engine that means something else here or that kilroy-bot does not run"},
	}
}

// ruleSeverity returns the severity of rule, or "" for an unknown rule
// (which a test catches).
func ruleSeverity(rule string) Severity {
	for _, r := range Rules() {
		if r.ID == rule {
			return r.Severity
		}
	}
	return ""
}
