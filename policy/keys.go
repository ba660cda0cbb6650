package policy

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// legacyKeys maps keys of older configurations to their replacement.
func legacyKeys() map[string]string {
	return map[string]string{
		"git.checkpoint_exclude_globs": "artifact_policy.checkpoint.exclude_globs",
	}
}

// checkKeys reports every mapping key that t (a file* type) does not
// declare, walking n and t together. Nodes of the wrong kind are left to
// the schema; aliases were refused before.
func checkKeys(n *yaml.Node, t reflect.Type, at keyPath) []fieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var errs []fieldError
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if ft, ok := fieldByKey(t, k.Value); ok {
				errs = append(errs, checkKeys(v, ft, at.with(k.Value))...)
			} else {
				errs = append(errs, unknownKey(k, v, t, at))
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, checkKeys(n.Content[i+1], t.Elem(), at.with(n.Content[i].Value))...)
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			errs = append(errs, checkKeys(item, t.Elem(), at.with(i))...)
		}
	}
	return errs
}

// unknownKey explains key k, naming the new key for a legacy one.
func unknownKey(k, v *yaml.Node, t reflect.Type, at keyPath) fieldError {
	p := at.with(k.Value)
	if v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			old := p.with(v.Content[i].Value).String()
			if repl, ok := legacyKeys()[old]; ok {
				return fieldError{node: v.Content[i], path: p.with(v.Content[i].Value),
					msg: fmt.Sprintf("%s is no longer supported: move these globs to %s", old, repl)}
			}
		}
	}
	return fieldError{node: k, path: p, msg: unknownKeyMsg(k.Value, at, yamlKeys(t))}
}

// unknownKeyMsg names the key, where it is, the keys known there and the
// nearest of them.
func unknownKeyMsg(key string, at keyPath, known []string) string {
	msg := fmt.Sprintf("unknown key %q %s (known: %s)", key, inPath(at), strings.Join(known, ", "))
	if s := attractor.Suggest(key, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

func inPath(at keyPath) string {
	if len(at) == 0 {
		return "at top level"
	}
	return "in " + at.String()
}

// fieldByKey finds the type of the struct field tagged yaml:"key".
func fieldByKey(t reflect.Type, key string) (reflect.Type, bool) {
	for i := range t.NumField() {
		if yamlName(t.Field(i)) == key {
			return t.Field(i).Type, true
		}
	}
	return nil, false
}

// yamlKeys lists the keys of struct t in declaration order.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			keys = append(keys, name)
		}
	}
	return keys
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}
