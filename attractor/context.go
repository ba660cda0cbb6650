package attractor

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Context is the run's key-value store. Values must be JSON-serialisable
// (checkpoints carry them) and are never mutated in place: an update
// replaces the key's value. That makes a shallow copy a safe snapshot;
// Clone deep-copies anyway so a parallel branch cannot alias its parent.
//
// A Context is owned by one goroutine (the run loop or one branch);
// handlers receive it read-only and return updates in their Outcome.
type Context struct {
	m map[string]any
	// changing, if set, is called with a key before it is set or
	// deleted: the run's State notes what it was (state_changes.go).
	changing func(key string)
}

// NewContext returns a context holding a copy of values.
func NewContext(values map[string]any) *Context {
	c := &Context{m: make(map[string]any, len(values))}
	maps.Copy(c.m, values)
	return c
}

// Get returns the raw value of key.
func (c *Context) Get(key string) (any, bool) {
	v, ok := c.m[key]
	return v, ok
}

// String returns the string view of key used by conditions and prompts:
// strings as is, scalars formatted, anything else as JSON.
func (c *Context) String(key string) (string, bool) {
	v, ok := c.m[key]
	if !ok {
		return "", false
	}
	return contextString(v), true
}

// Keys returns the keys in sorted order.
func (c *Context) Keys() []string {
	return slices.Sorted(maps.Keys(c.m))
}

// Len returns the number of keys.
func (c *Context) Len() int { return len(c.m) }

// Set stores v under key.
func (c *Context) Set(key string, v any) {
	if c.changing != nil {
		c.changing(key)
	}
	c.m[key] = v
}

// Apply stores every update.
func (c *Context) Apply(updates map[string]any) {
	for k, v := range updates {
		c.Set(k, v)
	}
}

func (c *Context) delete(key string) {
	if c.changing != nil {
		c.changing(key)
	}
	delete(c.m, key)
}

// Snapshot returns a shallow copy of the values (safe because values are
// replaced, not mutated).
func (c *Context) Snapshot() map[string]any {
	return maps.Clone(c.m)
}

// Clone returns a deep copy.
func (c *Context) Clone() *Context {
	return &Context{m: deepCopyMap(c.m)}
}

// MarshalJSON encodes the values as a JSON object.
func (c *Context) MarshalJSON() ([]byte, error) {
	return json.Marshal(c.m)
}

// UnmarshalJSON replaces the values with a decoded JSON object.
func (c *Context) UnmarshalJSON(b []byte) error {
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("decode context: %w", err)
	}
	c.m = m
	return nil
}

func contextString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case Status:
		return string(x)
	case FailureClass:
		return string(x)
	case fmt.Stringer:
		return x.String()
	}
	if b, err := json.Marshal(v); err == nil {
		if s := string(b); len(s) == 0 || s[0] == '{' || s[0] == '[' {
			return s
		}
	}
	return fmt.Sprint(v)
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

// deepCopyValue copies the container shapes JSON produces and the common
// typed ones; other values are copied through a JSON round trip.
func deepCopyValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int, int64, float64, Status, FailureClass:
		return x
	case map[string]any:
		return deepCopyMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	case map[string]string:
		return maps.Clone(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}
