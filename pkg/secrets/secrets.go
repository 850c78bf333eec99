// Package secrets refuses configured secrets that are still placeholders,
// such as the values deploy/k8s ships: a platform that starts with a
// documented key or password is open to anyone who read the docs.
package secrets

import (
	"fmt"
	"strings"
)

// placeholders are the words that mark a value as not yet chosen.
var placeholders = []string{"change-me", "change_me", "changeme", "replace-me", "placeholder", "example"}

// CheckNotPlaceholder returns an error naming the setting when value looks
// like a placeholder. An empty value is not checked: whether a setting is
// required is the caller's rule.
func CheckNotPlaceholder(name, value string) error {
	lower := strings.ToLower(value)
	for _, p := range placeholders {
		if strings.Contains(lower, p) {
			return fmt.Errorf("%s holds a placeholder (it contains %q); set a real value", name, p)
		}
	}
	return nil
}
