package attractor

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContextStringView(t *testing.T) {
	c := NewContext(map[string]any{
		"s": "text", "b": true, "i": 3, "f": 2.5, "whole": float64(7), "st": StatusFail,
		"list": []string{"a", "b"}, "obj": map[string]any{"k": 1}, "nil": nil,
	})
	want := map[string]string{
		"s": "text", "b": "true", "i": "3", "f": "2.5", "whole": "7", "st": "fail",
		"list": `["a","b"]`, "obj": `{"k":1}`, "nil": "",
	}
	got := map[string]string{}
	for _, k := range c.Keys() {
		got[k], _ = c.String(k)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("string view (-got +want):\n%s", diff)
	}
	if _, ok := c.String("missing"); ok {
		t.Error("missing key reported present")
	}
}

func TestContextCloneIsDeep(t *testing.T) {
	inner := map[string]any{"k": "v"}
	list := []any{"x"}
	c := NewContext(map[string]any{"m": inner, "l": list, "parallel.results": []BranchResult{{Branch: "a"}}})
	d := c.Clone()
	inner["k"] = "changed"
	list[0] = "changed"
	got, _ := d.String("m")
	gotL, _ := d.String("l")
	if got != `{"k":"v"}` || gotL != `["x"]` {
		t.Errorf("clone shares containers: m=%s l=%s", got, gotL)
	}
	rs, err := branchResults(d)
	if err != nil || len(rs) != 1 || rs[0].Branch != "a" {
		t.Errorf("branch results after clone = %v, %v", rs, err)
	}
}

func TestContextJSONRoundTrip(t *testing.T) {
	c := NewContext(map[string]any{"n": 3, "s": "x", "l": []string{"a"}})
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var d Context
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stringView(d.Snapshot()), stringView(c.Snapshot())); diff != "" {
		t.Errorf("round trip (-got +want):\n%s", diff)
	}
}
