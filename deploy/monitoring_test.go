package deploy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

const (
	rulesFile     = "prometheus/tessera-rules.yaml"
	rulesTestFile = "prometheus/tessera-rules.test.yaml"
	dashboardFile = "grafana/tessera.json"
)

// ruleFile is the Prometheus rule file format, decoded strictly so a
// misspelt field is an error rather than a rule that never fires.
type ruleFile struct {
	Groups []struct {
		Name     string `json:"name"`
		Interval string `json:"interval,omitempty"`
		Rules    []struct {
			Alert         string            `json:"alert,omitempty"`
			Record        string            `json:"record,omitempty"`
			Expr          string            `json:"expr"`
			For           string            `json:"for,omitempty"`
			KeepFiringFor string            `json:"keep_firing_for,omitempty"`
			Labels        map[string]string `json:"labels,omitempty"`
			Annotations   map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

func loadRules(t *testing.T) ruleFile {
	t.Helper()
	var rf ruleFile
	if err := yaml.UnmarshalStrict(readFile(t, rulesFile), &rf); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	return rf
}

// TestAlertRules runs promtool's checks and the rules' unit tests.
func TestAlertRules(t *testing.T) {
	promtool := need(t, "promtool", "go install github.com/prometheus/prometheus/cmd/promtool@v0.316.0")
	if out, err := run(t, ".", promtool, "check", "rules", rulesFile); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
	if out, err := run(t, "prometheus", promtool, "test", "rules", "tessera-rules.test.yaml"); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
	// Every alert is exercised by a unit test or knowingly left out.
	tested := string(readFile(t, rulesTestFile))
	untested := map[string]bool{"TesseraTargetDown": true, "TesseraPeersSuspect": true, "TesseraProcessRestarting": true,
		"TesseraPeerDiskFillingUp": true, "TesseraS3SlowGets": true, "TesseraRepairFailing": true, "TesseraScrubOverdue": true}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s needs a severity label, a summary and a description", r.Alert)
			}
			if !untested[r.Alert] && !strings.Contains(tested, "alertname: "+r.Alert+"\n") {
				t.Errorf("alert %s has no unit test in %s", r.Alert, rulesTestFile)
			}
		}
	}
}

// dashboard is the part of a Grafana dashboard the checks read.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct{ X, Y, W, H int } `json:"gridPos"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal(readFile(t, dashboardFile), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// grafanaVars are the dashboard's variables, replaced by what Grafana puts
// in their place before the query is parsed as PromQL.
var grafanaVars = strings.NewReplacer("$__rate_interval", "1m", "$__interval", "1m", "$__range", "1h")

// TestDashboard checks the dashboard's structure and parses every query.
func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("dashboard needs a uid and a title")
	}
	if len(d.Templating.List) != 1 || d.Templating.List[0].Name != "datasource" || d.Templating.List[0].Query != "prometheus" {
		t.Errorf("dashboard variables %+v: want one Prometheus data source variable, datasource", d.Templating.List)
	}
	ids := map[int]bool{}
	queries := 0
	for _, p := range allPanels(d.Panels) {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if g := p.GridPos; g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, g)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not query the ${datasource} variable", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			queries++
			if _, err := parseQuery(tg.Expr); err != nil {
				t.Errorf("panel %q query %s: %q: %v", p.Title, tg.RefID, tg.Expr, err)
			}
		}
	}
	if queries < 30 {
		t.Errorf("dashboard has %d queries; the panels were not read", queries)
	}
}

func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

func parseQuery(q string) (parser.Expr, error) {
	return parser.NewParser(parser.Options{}).ParseExpr(grafanaVars.Replace(q))
}

// seriesUsed returns every metric name the rules and the dashboard select,
// with where each is used.
func seriesUsed(t *testing.T) map[string][]string {
	t.Helper()
	used := map[string][]string{}
	add := func(where, q string) {
		expr, err := parseQuery(q)
		if err != nil {
			t.Fatalf("%s: %q: %v", where, q, err)
		}
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok {
				if vs.Name == "" {
					t.Errorf("%s: %q selects series without a metric name", where, q)
				}
				used[vs.Name] = append(used[vs.Name], where)
			}
			return nil
		})
	}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			add("alert "+r.Alert, r.Expr)
		}
	}
	for _, p := range allPanels(loadDashboard(t).Panels) {
		for _, tg := range p.Targets {
			add("panel "+p.Title, tg.Expr)
		}
	}
	return used
}

// prometheusOwn are series Prometheus makes itself for every target.
var prometheusOwn = map[string]bool{"up": true}

// TestSeriesExported starts a gateway and three peers, puts and reads
// objects while their scrubbers run, and scrapes every /metrics until each
// series the rules and the dashboard use has appeared. A name that never
// appears is a panel that stays empty or an alert that never fires.
func TestSeriesExported(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a four-process cluster; run without -short")
	}
	used := seriesUsed(t)
	if len(used) < 30 {
		t.Fatalf("only %d series found in the rules and the dashboard; the queries were not read", len(used))
	}
	want := map[string]bool{}
	for name := range used {
		if !prometheusOwn[name] {
			want[name] = true
		}
	}
	c := startCluster(t)
	c.load(t, 40)
	seen := c.scrapeUntil(t, want)
	var missing []string
	for name := range want {
		if !seen[name] {
			missing = append(missing, fmt.Sprintf("%s (in %s)", name, strings.Join(used[name], ", ")))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("series no gateway or peer exported:\n  %s", strings.Join(missing, "\n  "))
	}
}

// exposition line: a sample's metric name, before its labels or value.
var sampleName = regexp.MustCompile(`(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]`)

// sampleNames lists the metric names of the samples in a text exposition.
func sampleNames(body []byte) map[string]bool {
	names := map[string]bool{}
	for _, m := range sampleName.FindAllSubmatch(body, -1) {
		names[string(m[1])] = true
	}
	return names
}

func TestSampleNames(t *testing.T) {
	body := "# HELP a_total x\n# TYPE a_total counter\na_total{op=\"x\"} 1\nb 2\nh_bucket{le=\"1\"} 3\n"
	got := sampleNames([]byte(body))
	for _, n := range []string{"a_total", "b", "h_bucket"} {
		if !got[n] {
			t.Errorf("%s not found in %v", n, got)
		}
	}
	if got["HELP"] || got["TYPE"] || len(got) != 3 {
		t.Errorf("sampleNames = %v", got)
	}
}
