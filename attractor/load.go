package attractor

import (
	"errors"
	"fmt"

	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// LoadOption configures Load and Validate.
type LoadOption func(*loadConfig)

type loadConfig struct {
	types map[string]bool // custom handler types the host registered
	caps  GraphCaps
	// repoDir and managerDepth serve the manager loop rules
	// (manager_validate.go).
	repoDir      string
	managerDepth int
}

// WithHandlerTypes declares custom handler types (`type=` values) the host
// has registered, so that type_known does not warn about them.
func WithHandlerTypes(types ...string) LoadOption {
	return func(c *loadConfig) {
		for _, t := range types {
			c.types[t] = true
		}
	}
}

func newLoadConfig(opts []LoadOption) loadConfig {
	c := loadConfig{types: map[string]bool{}}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// MaxSourceBytes is the largest pipeline file Load accepts (1 MiB): the
// file comes from a pull request, and parsing costs memory in proportion.
const MaxSourceBytes = 1 << 20

// SourceTooLarge is the diagnostic for a pipeline file of size bytes, over
// MaxSourceBytes.
func SourceTooLarge(file string, size int64) Diagnostic {
	return Diagnostic{Rule: RuleSyntax, Severity: ruleSeverity(RuleSyntax), File: file, Line: 1, Col: 1,
		Message: fmt.Sprintf("the file is %d bytes, over the %d-byte (1 MiB) limit for pipeline files", size, MaxSourceBytes),
		Fix:     "split the pipeline into smaller ones, or move long prompts into files the nodes read"}
}

// syntaxFix points at the dialect reference; parse messages carry the
// specific advice themselves.
const syntaxFix = "see docs/rules.md#syntax for the DOT dialect pipelines use"

// Load parses a pipeline file and turns it into a typed Pipeline, then
// runs Validate on it. It returns every diagnostic (those only the source
// shows, such as attr_type, condition_syntax, stylesheet_syntax and
// duration_unrenderable, and Validate's), sorted by position.
//
// The error is non-nil exactly when the pipeline must not run:
//   - a file over MaxSourceBytes: the Pipeline is nil and the diagnostics
//     hold one `syntax` diagnostic on line 1 saying so;
//   - a syntax error: the *dot.Error is wrapped, the Pipeline is nil and
//     the diagnostics hold one `syntax` diagnostic;
//   - a graph over its GraphCaps: the Pipeline is nil and the diagnostics
//     hold one `syntax` diagnostic at the node or edge past the cap;
//   - error-severity diagnostics: a *ValidationError, and the Pipeline is
//     still returned so tools can show what was understood.
func Load(file string, src []byte, opts ...LoadOption) (*Pipeline, Diagnostics, error) {
	if len(src) > MaxSourceBytes {
		d := SourceTooLarge(file, int64(len(src)))
		return nil, Diagnostics{d}, fmt.Errorf("load %s: %s", file, d.Message)
	}
	g, err := dot.Parse(file, src)
	if err != nil {
		return nil, Diagnostics{SyntaxDiagnostic(err)}, fmt.Errorf("load %s: %w", file, err)
	}
	cfg := newLoadConfig(opts)
	if d := overCaps(file, g, cfg.caps); d != nil {
		return nil, Diagnostics{*d}, fmt.Errorf("load %s: %s", file, d.Message)
	}
	p, ds := build(file, g)
	ds = append(ds, validate(p, cfg)...)
	ds.Sort()
	if ds.HasErrors() {
		return p, ds, &ValidationError{Diagnostics: ds.Errors()}
	}
	return p, ds, nil
}

// SyntaxDiagnostic turns a parse error into a `syntax` diagnostic. An
// error without a position (not a *dot.Error) gets line 0.
func SyntaxDiagnostic(err error) Diagnostic {
	d := Diagnostic{Rule: RuleSyntax, Severity: ruleSeverity(RuleSyntax), Message: err.Error(), Fix: syntaxFix}
	var de *dot.Error
	if errors.As(err, &de) {
		d.File, d.Line, d.Col, d.Message = de.Pos.File, de.Pos.Line, de.Pos.Col, de.Msg
	}
	return d
}
