package checks

import (
	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// DiagnosticAnnotations turns the diagnostics of loading a pipeline into
// annotations on the pipeline file's lines, most severe first, so that an
// invalid `.kilroy/*.dot` fails its check pointing at the offending line.
// Diagnostic files must be relative to the repository root, as Load was
// given them.
func DiagnosticAnnotations(ds attractor.Diagnostics, r *Redactor) []Annotation {
	out := make([]Annotation, 0, len(ds))
	for _, d := range ds {
		a := Annotation{
			Path:      d.File,
			StartLine: max(d.Line, 1),
			EndLine:   max(d.Line, 1),
			Level:     diagnosticLevel(d.Severity),
			Message:   firstNonEmpty(d.Message, d.Rule),
			Title:     "kilroy: " + d.Rule,
		}
		if d.Col > 0 {
			a.StartColumn, a.EndColumn = d.Col, d.Col
		}
		if d.Fix != "" {
			a.Message += "\n\nFix: " + d.Fix
		}
		out = append(out, fitAnnotation(a, r))
	}
	SortAnnotations(out)
	return out
}

func diagnosticLevel(s attractor.Severity) string {
	switch s {
	case attractor.SeverityError:
		return LevelFailure
	case attractor.SeverityWarning:
		return LevelWarning
	}
	return LevelNotice
}
