package protocol

import (
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
	"gopkg.in/yaml.v3"
)

// checkEngineURLs checks variant i's engine.url or engine.urls: exactly one
// is set; a url is builtin or http(s); urls are http(s), each once, and
// name engines the run does not start (one start: command runs one engine,
// and one metrics_url names one endpoint).
func (p *Protocol) checkEngineURLs(doc *yaml.Node, i int, e extractbench.Engine) []string {
	at := func(key string) string {
		field := fmt.Sprintf("variants.%d.engine", i)
		if key != "" {
			field += "." + key
		}
		return fmt.Sprintf("%s:%d: %s", p.Source, lineOf(doc, field), field)
	}
	isHTTP := func(u string) bool { return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") }
	switch {
	case e.URL != "" && len(e.URLs) > 0:
		return []string{at("urls") + ": url and urls are both set: write url for one engine, or urls for its replicas, not both"}
	case e.URL == "" && len(e.URLs) == 0:
		return []string{at("") + ": neither url nor urls is set: write url (builtin, or http://host:port) for one engine, or urls for its replicas"}
	case e.URL != "":
		if !e.IsBuiltin() && !isHTTP(e.URL) {
			return []string{fmt.Sprintf("%s: %q is neither builtin nor an http(s) URL", at("url"), e.URL)}
		}
		if !e.IsBuiltin() && e.Replicas != 0 {
			return []string{at("replicas") + ": replicas: N starts N built-in engines (url: builtin); list the replicas of another engine in urls"}
		}
		return nil
	case e.Replicas != 0:
		return []string{at("replicas") + ": replicas: N starts N built-in engines (url: builtin); urls already lists the replicas"}
	}
	var problems []string
	seen := map[string]int{}
	for j, u := range e.URLs {
		norm := strings.TrimRight(u, "/")
		switch {
		case !isHTTP(u):
			problems = append(problems, fmt.Sprintf("%s: %q is not an http(s) URL: replicas are engines reached by URL (start each one, e.g. extractbench engine serve -addr 127.0.0.1:8001 for the built-in engine)", at(fmt.Sprintf("urls.%d", j)), u))
		case seen[norm] > 0:
			problems = append(problems, fmt.Sprintf("%s: %q is listed twice (urls.%d): each replica once", at(fmt.Sprintf("urls.%d", j)), u, seen[norm]-1))
		}
		if _, dup := seen[norm]; !dup {
			seen[norm] = j + 1
		}
	}
	if e.Start != "" {
		problems = append(problems, at("start")+": start: runs one engine, and urls name replicas the run does not start: start the replicas first, or measure one engine with url")
	}
	if e.MetricsURL != "" {
		problems = append(problems, at("metrics_url")+": metrics_url names one endpoint; with urls each replica's URL + /metrics is read")
	}
	return problems
}
