package postgres

import (
	"fmt"
	"strings"
)

// sqlWhere collects the conditions of a query; each ? of a condition becomes
// the next positional parameter.
type sqlWhere struct {
	conds []string
	args  []any
}

func (w *sqlWhere) add(cond string, vals ...any) {
	for _, v := range vals {
		w.args = append(w.args, v)
		cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(w.args)), 1)
	}
	w.conds = append(w.conds, cond)
}

// addSame adds cond with every ? of it bound to the one value v.
func (w *sqlWhere) addSame(cond string, v any) {
	w.conds = append(w.conds, strings.ReplaceAll(cond, "?", w.next(v)))
}

func (w *sqlWhere) String() string { return strings.Join(w.conds, " AND ") }

// next is the placeholder of the next parameter, appending v.
func (w *sqlWhere) next(v any) string {
	w.args = append(w.args, v)
	return fmt.Sprintf("$%d", len(w.args))
}

// escapeLike makes user text match literally inside ILIKE patterns.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
