package ghapptest

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// checkSchemas validate check-run request bodies as GitHub would.
type checkSchemas struct {
	create, update *jsonschema.Schema
}

const (
	createSchemaFile = "checks-create.request.schema.json"
	updateSchemaFile = "checks-update.request.schema.json"
)

func loadCheckSchemas(dir string) (*checkSchemas, error) {
	c := jsonschema.NewCompiler()
	// GitHub rejects malformed timestamps, so formats are assertions here.
	c.AssertFormat()
	create, err := c.Compile(filepath.Join(dir, createSchemaFile))
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", createSchemaFile, err)
	}
	update, err := c.Compile(filepath.Join(dir, updateSchemaFile))
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", updateSchemaFile, err)
	}
	return &checkSchemas{create: create, update: update}, nil
}

// maxSchemaLines bounds the validation message: 51 bad annotations should
// not print 51 lines into a failure.
const maxSchemaLines = 8

// validate checks body against sch and explains a failure in a few lines
// naming the schema file and the JSON pointers at fault.
func validate(sch *jsonschema.Schema, file string, body []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	err = sch.Validate(v)
	if err == nil {
		return nil
	}
	// The first line names the schema by its location on disk; the rest
	// is what matters.
	_, detail, _ := strings.Cut(err.Error(), "\n")
	lines := strings.Split(detail, "\n")
	if len(lines) > maxSchemaLines {
		lines = append(lines[:maxSchemaLines], fmt.Sprintf("  … and %d more", len(lines)-maxSchemaLines))
	}
	return fmt.Errorf("%s:\n%s", file, strings.Join(lines, "\n"))
}
