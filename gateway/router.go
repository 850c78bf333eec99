package gateway

import (
	"net/url"
	"strings"
)

// router matches request paths against Routes. Static segments win over
// parameters, so /v1/review-queue/count is never taken for an id.
type router struct {
	routes []compiled
}

type compiled struct {
	Route
	segs   []string // "" marks a parameter
	names  []string
	static int
}

type match struct {
	route  *compiled
	params url.Values
}

func newRouter(routes []Route) *router {
	r := &router{}
	for _, rt := range routes {
		c := compiled{Route: rt}
		for _, s := range strings.Split(strings.Trim(rt.Pattern, "/"), "/") {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
				c.segs = append(c.segs, "")
				c.names = append(c.names, s[1:len(s)-1])
				continue
			}
			c.segs = append(c.segs, s)
			c.static++
		}
		r.routes = append(r.routes, c)
	}
	return r
}

// find returns the best route for method and path; pathKnown reports whether
// any route has this path under another method (405 rather than 404).
func (r *router) find(method, path string) (m match, pathKnown bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	best := -1
	for i := range r.routes {
		c := &r.routes[i]
		if len(c.segs) != len(segs) || !c.matches(segs) {
			continue
		}
		if c.Method != method {
			pathKnown = true
			continue
		}
		if c.static > best {
			best = c.static
			m.route = c
		}
	}
	if m.route != nil {
		m.params = url.Values{}
		j := 0
		for i, s := range m.route.segs {
			if s == "" {
				m.params.Set(m.route.names[j], segs[i])
				j++
			}
		}
	}
	return m, pathKnown
}

func (c *compiled) matches(segs []string) bool {
	for i, s := range c.segs {
		if s == "" {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if s != segs[i] {
			return false
		}
	}
	return true
}
