package checks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
)

func TestDiagnosticAnnotations(t *testing.T) {
	src := "digraph ci {\n  start [shape=Mdiamond]\n  done [shape=Msquare]\n  start -> dnoe\n  start -> done\n}\n"
	_, ds, err := attractor.Load(".kilroy/ci.dot", []byte(src))
	if err == nil {
		t.Fatal("an edge to an undeclared node loaded without error")
	}
	anns := DiagnosticAnnotations(ds, nil)
	if len(anns) == 0 {
		t.Fatal("no annotations")
	}
	got := anns[0]
	got.Message, got.Title = "", ""
	want := Annotation{Path: ".kilroy/ci.dot", StartLine: 4, EndLine: 4, StartColumn: got.StartColumn, EndColumn: got.StartColumn, Level: LevelFailure}
	if diff := cmp.Diff(got, want); diff != "" || got.StartColumn == 0 {
		t.Errorf("first annotation (-got +want):\n%s", diff)
	}
	if anns[0].Title == "kilroy: " || anns[0].Message == "" {
		t.Errorf("annotation lacks a rule or message: %+v", anns[0])
	}
}
