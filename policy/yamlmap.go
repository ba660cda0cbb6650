package policy

import "go.yaml.in/yaml/v3"

// pairMap is a map that decodes its YAML mapping pair by pair. yaml.v3
// checks a mapping it decodes into a Go map for duplicate keys by comparing
// every key with every other, which made a configuration with many
// pipelines (or variables) take minutes; convert has already refused
// duplicates in one pass, so the check is not needed. Every map the
// configuration decodes goes through this type.
type pairMap[V any] map[string]V

func (m *pairMap[V]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		var plain map[string]V // yaml's own error for the wrong kind
		if err := n.Decode(&plain); err != nil {
			return err
		}
		*m = plain
		return nil
	}
	out := make(pairMap[V], len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		var k string
		if err := n.Content[i].Decode(&k); err != nil {
			return err
		}
		var v V
		if err := n.Content[i+1].Decode(&v); err != nil {
			return err
		}
		out[k] = v
	}
	*m = out
	return nil
}

// UnmarshalYAML decodes the env block's maps through pairMap, keeping
// their plain map types for the rest of the program.
func (e *EnvPolicy) UnmarshalYAML(n *yaml.Node) error {
	var f struct {
		Overrides    pairMap[pairMap[string]] `yaml:"overrides"`
		ManagedRoots pairMap[string]          `yaml:"managed_roots"`
	}
	if err := n.Decode(&f); err != nil {
		return err
	}
	*e = EnvPolicy{ManagedRoots: f.ManagedRoots}
	if f.Overrides != nil {
		e.Overrides = make(map[string]map[string]string, len(f.Overrides))
		for prof, vars := range f.Overrides {
			e.Overrides[prof] = vars
		}
	}
	return nil
}
