package metrics_test

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// The module does not depend on Prometheus's PromQL parser, so these tests read names with a
// tokenizer of their own. It knows enough PromQL to tell a metric name from a label name, a
// function, a keyword, a duration or a string.

// promqlKeywords are identifiers that never name a metric.
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"start": true, "end": true, "inf": true, "nan": true,
	// Aggregations, which may be followed by a label list before their parenthesis.
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

// labelListKeywords are followed by a parenthesised list of label names.
var labelListKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// token is one lexical token of a PromQL expression.
type token struct {
	kind  tokenKind
	text  string // an identifier, a punctuation mark, or a string's value
	quote bool   // a string literal
}

type tokenKind int

const (
	tokIdent tokenKind = iota
	tokString
	tokNumber
	tokPunct
)

// tokenize splits a PromQL expression into tokens. It drops comments and white space.
func tokenize(expr string) ([]token, error) {
	var out []token
	rs := []rune(expr)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '#':
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case r == '"' || r == '\'' || r == '`':
			value, n, err := readString(rs[i:])
			if err != nil {
				return nil, fmt.Errorf("at offset %d: %w", i, err)
			}
			out = append(out, token{kind: tokString, text: value, quote: true})
			i += n
		case isIdentStart(r):
			j := i + 1
			for j < len(rs) && isIdentPart(rs[j]) {
				j++
			}
			out = append(out, token{kind: tokIdent, text: string(rs[i:j])})
			i = j
		case unicode.IsDigit(r) || (r == '.' && i+1 < len(rs) && unicode.IsDigit(rs[i+1])):
			// A number or a duration: 0.5, 1e-3, 0x1f, 5m, 2m30s.
			j := i + 1
			for j < len(rs) && (isIdentPart(rs[j]) || rs[j] == '.' ||
				((rs[j] == '+' || rs[j] == '-') && (rs[j-1] == 'e' || rs[j-1] == 'E'))) {
				j++
			}
			out = append(out, token{kind: tokNumber, text: string(rs[i:j])})
			i = j
		default:
			out = append(out, token{kind: tokPunct, text: string(r)})
			i++
		}
	}
	return out, nil
}

// readString reads the string literal at the start of rs. It returns its value and its length.
func readString(rs []rune) (string, int, error) {
	q := rs[0]
	var b strings.Builder
	for i := 1; i < len(rs); i++ {
		switch {
		case rs[i] == q:
			return b.String(), i + 1, nil
		case rs[i] == '\\' && q != '`' && i+1 < len(rs):
			i++
			b.WriteRune(rs[i])
		default:
			b.WriteRune(rs[i])
		}
	}
	return "", 0, errors.New("unterminated string")
}

func isIdentStart(r rune) bool { return r == '_' || r == ':' || unicode.IsLetter(r) }

func isIdentPart(r rune) bool { return isIdentStart(r) || unicode.IsDigit(r) }

// metricNames returns the metric names that a PromQL expression selects, in order. A name is a
// bare identifier, a quoted name inside braces, or the value of an exact __name__ matcher.
func metricNames(expr string) ([]string, error) {
	toks, err := tokenize(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	braces, brackets := 0, 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		next := func(k int) token {
			if i+k < len(toks) {
				return toks[i+k]
			}
			return token{}
		}
		switch {
		case t.kind == tokPunct && t.text == "{":
			braces++
		case t.kind == tokPunct && t.text == "}":
			braces--
		case t.kind == tokPunct && t.text == "[":
			brackets++
		case t.kind == tokPunct && t.text == "]":
			brackets--
		case braces > 0:
			n, isName, err := matcherName(toks, i)
			if err != nil {
				return nil, err
			}
			if isName {
				names = append(names, n)
			}
		case brackets > 0 || t.kind != tokIdent:
			// A range or a subquery holds durations; numbers, strings and operators are no names.
		case labelListKeywords[t.text]:
			if next(1).text == "(" {
				// Skip the label names up to the closing parenthesis.
				i++
				for i < len(toks) && toks[i].text != ")" {
					i++
				}
			}
		case promqlKeywords[t.text]:
		case next(1).kind == tokPunct && next(1).text == "(":
			// A function.
		default:
			names = append(names, t.text)
		}
	}
	if braces != 0 || brackets != 0 {
		return nil, errors.New("unbalanced braces or brackets")
	}
	return names, nil
}

// matcherName reads the token at i inside a selector's braces. It returns the metric name that
// the token gives, if it gives one: the value of `__name__="..."`, or a quoted name that stands
// alone (Prometheus 3's `{"name"}`).
func matcherName(toks []token, i int) (string, bool, error) {
	t := toks[i]
	prev := func(k int) string {
		if i-k >= 0 {
			return toks[i-k].text
		}
		return ""
	}
	after := ""
	if i+1 < len(toks) {
		after = toks[i+1].text
	}
	switch {
	case t.kind != tokString:
		return "", false, nil
	case prev(1) == "=" && prev(2) == "__name__":
		return t.text, true, nil
	case prev(1) == "~" && prev(3) == "__name__":
		return "", false, fmt.Errorf("a regular expression on __name__ (%q) names no metric to check", t.text)
	case (prev(1) == "{" || prev(1) == ",") && (after == "," || after == "}"):
		return t.text, true, nil
	}
	return "", false, nil
}
