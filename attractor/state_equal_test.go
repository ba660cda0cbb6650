package attractor

import (
	"reflect"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor/findings"
)

// sameOutcome answers as reflect.DeepEqual for outcomes that differ in any
// one field (so a field added to Outcome cannot slip past its quick path),
// for equal ones, and for ones that share or copy their maps and slices.
func TestSameOutcomeIsDeepEqual(t *testing.T) {
	base := Outcome{Status: StatusSuccess, Notes: "n", Meta: map[string]any{"exit_code": 0},
		Findings: []findings.Finding{{Path: "a.go", Line: 1}}}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		other := base
		v := reflect.ValueOf(&other).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Map:
			m := reflect.MakeMap(v.Type())
			m.SetMapIndex(reflect.ValueOf("k"), reflect.Zero(v.Type().Elem()))
			v.Set(m)
		case reflect.Slice:
			v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), reflect.Zero(v.Type().Elem())))
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
		default:
			t.Fatalf("Outcome.%s is a %s: teach this test (and sameOutcome) about it", f.Name, v.Kind())
		}
		if sameOutcome(base, other) || sameOutcome(other, base) {
			t.Errorf("outcomes differing in %s compare the same", f.Name)
		}
	}
	withUsage := base
	withUsage.Usage = &Usage{InputTokens: 1}
	if sameOutcome(base, withUsage) || sameOutcome(withUsage, Outcome{Status: StatusSuccess, Notes: "n", Meta: base.Meta,
		Findings: base.Findings, Usage: &Usage{InputTokens: 2}}) {
		t.Errorf("outcomes differing in their usage compare the same")
	}
	copied := base
	copied.Meta = map[string]any{"exit_code": 0}
	copied.Findings = []findings.Finding{{Path: "a.go", Line: 1}}
	for name, o := range map[string]Outcome{"itself": base, "a copy of its maps and slices": copied} {
		if !sameOutcome(base, o) {
			t.Errorf("an outcome and %s compare different", name)
		}
	}
	var nilMeta Outcome
	emptyMeta := Outcome{Meta: map[string]any{}}
	if got, want := sameOutcome(nilMeta, emptyMeta), reflect.DeepEqual(nilMeta, emptyMeta); got != want {
		t.Errorf("nil against empty Meta: %v, reflect.DeepEqual says %v", got, want)
	}
}

// sameValue answers as reflect.DeepEqual.
func TestSameValueIsDeepEqual(t *testing.T) {
	values := []any{nil, "a", "b", 1, 2, int64(1), 1.0, true, false, []string{"a"}, []any{"a"}, map[string]any{"k": 1}}
	for _, a := range values {
		for _, b := range values {
			if got, want := sameValue(a, b), reflect.DeepEqual(a, b); got != want {
				t.Errorf("sameValue(%#v, %#v) = %v, reflect.DeepEqual says %v", a, b, got, want)
			}
		}
	}
}
