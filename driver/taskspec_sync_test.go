package driver

import (
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/driver/taskspec"
)

// The scheduler validates configs with taskspec, which refuses keys it does
// not know: a key the driver's schema gains must be known there too.
func TestTaskSpecKnowsEverySchemaKey(t *testing.T) {
	for k := range taskConfigSpec.GetObject().GetAttributes() {
		if !slices.Contains(taskspec.Fields, k) {
			t.Errorf("driver schema key %q is missing from taskspec.Fields (and FromJob)", k)
		}
	}
	if n := len(taskConfigSpec.GetObject().GetAttributes()); n != len(taskspec.Fields) {
		t.Errorf("driver schema has %d keys, taskspec.Fields %d", n, len(taskspec.Fields))
	}
}
