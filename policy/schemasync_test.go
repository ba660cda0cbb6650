package policy

import (
	"reflect"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/schema"
	"github.com/kilroy-bot/kilroy-bot/schema/schematest"
)

// TestSchemaMatchesTypes keeps the shipped schema and the strict decoder in
// step: every object in the schema declares exactly the keys of the Go type
// the decoder uses at that place.
func TestSchemaMatchesTypes(t *testing.T) {
	schematest.MatchesType(t, schema.Config(), reflect.TypeFor[fileConfig]())
}
