package checks

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Keys of a verify.artifacts outcome's Details.
const (
	detailOffending   = "offending_paths"
	detailDenyRules   = "matched_deny_rules" // path → rule, or a list of rules
	detailCommitted   = "committed_paths"
	detailUncommitted = "uncommitted_paths"
)

// artifactReport is what a verify.artifacts outcome says about paths.
type artifactReport struct {
	offending   []string
	rules       map[string]string // path → deny rule, when known
	ruleList    []string          // every matched rule, when the map is not given
	committed   map[string]bool
	uncommitted map[string]bool
}

// readArtifacts decodes an outcome's Details, accepting the values both as
// Go types (an in-process checker) and as decoded JSON (status.json).
func readArtifacts(o attractor.Outcome) artifactReport {
	d := o.Details
	rep := artifactReport{offending: stringList(d[detailOffending])}
	if m := stringMap(d[detailDenyRules]); m != nil {
		rep.rules = m
	} else {
		rep.ruleList = stringList(d[detailDenyRules])
	}
	rep.committed = set(stringList(d[detailCommitted]))
	rep.uncommitted = set(stringList(d[detailUncommitted]))
	return rep
}

// rule names the deny rule that matched p. With only a list of rules it
// tries each against p, and names them all when none decides.
func (a artifactReport) rule(p string) string {
	if r := a.rules[p]; r != "" {
		return r
	}
	if len(a.ruleList) == 1 {
		return a.ruleList[0]
	}
	for _, r := range a.ruleList {
		if globMatch(r, p) {
			return r
		}
	}
	return strings.Join(a.ruleList, ", ")
}

// where says where an offending path lives, so the reader knows whether
// to drop it from the branch or from the worktree.
func (a artifactReport) where(p string) string {
	switch {
	case a.committed[p] && a.uncommitted[p]:
		return "committed on the run branch and changed in the worktree"
	case a.committed[p]:
		return "committed on the run branch"
	case a.uncommitted[p]:
		return "uncommitted in the worktree"
	}
	return ""
}

// annotations gives one failure per offending path at line 1, titled by
// the deny rule.
func (a artifactReport) annotations() []Annotation {
	out := make([]Annotation, 0, len(a.offending))
	for _, p := range a.offending {
		rule := a.rule(p)
		title := "artifact policy: denied by " + firstNonEmpty(rule, "a deny rule")
		msg := fmt.Sprintf("%s is a build artifact under the artifact policy", p)
		if rule != "" {
			msg = fmt.Sprintf("%s matches the deny rule %s", p, rule)
		}
		if w := a.where(p); w != "" {
			msg += " (" + w + ")"
		}
		msg += ". Remove it from the run, or carve it out with verify.allow_globs."
		out = append(out, Annotation{Path: p, StartLine: 1, EndLine: 1, Level: LevelFailure, Message: msg, Title: title})
	}
	return out
}

// stringList accepts []string, []any of strings, or one string.
func stringList(v any) []string {
	switch x := v.(type) {
	case []string:
		return slices.Clone(x)
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		if x != "" {
			return []string{x}
		}
	}
	return nil
}

// stringMap accepts map[string]string or map[string]any of strings; nil
// for anything else.
func stringMap(v any) map[string]string {
	switch x := v.(type) {
	case map[string]string:
		return x
	case map[string]any:
		out := make(map[string]string, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok {
				out[k] = s
			}
		}
		return out
	}
	return nil
}

func set(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// globMatch matches a slash-separated path against a glob where "**"
// spans any number of segments and other segments follow path.Match. It
// only picks a rule's name for a message; the policy package decides.
func globMatch(glob, p string) bool {
	return matchSegments(strings.Split(glob, "/"), strings.Split(p, "/"))
}

func matchSegments(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if matchSegments(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, err := path.Match(g[0], p[0]); err != nil || !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}
