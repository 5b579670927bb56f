package storagetest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The suite compares what an engine gives back with what was written field
// by field, through reflection, so that a field added to the domain later
// is compared (and, through requireNoZeroFields, set by every fixture)
// without anyone touching the suite: an engine that does not store it
// fails.

var timeType = reflect.TypeFor[time.Time]()

// checkSame reports every field where got differs from want, naming it by
// its path (Charge.Card.Billing.PhoneNumber.LocalNumber). Times compare as
// stored: want truncated to the microsecond, got in UTC. A nil and an empty
// slice or map are alike (an engine may give back either); where the
// difference matters (an erased CVC) the test checks it on its own.
func checkSame(t *testing.T, got, want any) {
	t.Helper()
	for _, d := range diff(got, want) {
		t.Error(d)
	}
}

// diff returns one line per differing field of got and want, which must be
// of the same type.
func diff(got, want any) []string {
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	if g.Type() != w.Type() {
		return []string{fmt.Sprintf("comparing a %s with a %s", g.Type(), w.Type())}
	}
	var out []string
	diffValue(typeName(g.Type()), g, w, &out)
	return out
}

func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

func diffValue(path string, g, w reflect.Value, out *[]string) {
	if g.Type() == timeType {
		gt, wt := g.Interface().(time.Time), w.Interface().(time.Time).Truncate(time.Microsecond)
		if !gt.Equal(wt) {
			*out = append(*out, fmt.Sprintf("%s = %s, want %s", path, show(g), wt.UTC().Format(time.RFC3339Nano)))
		} else if gt.Location() != time.UTC {
			*out = append(*out, fmt.Sprintf("%s is in %v, want UTC", path, gt.Location()))
		}
		return
	}
	switch g.Kind() {
	case reflect.Pointer:
		switch {
		case g.IsNil() && w.IsNil():
		case g.IsNil() || w.IsNil():
			*out = append(*out, fmt.Sprintf("%s = %s, want %s", path, show(g), show(w)))
		default:
			diffValue(path, g.Elem(), w.Elem(), out)
		}
	case reflect.Struct:
		for i := range g.NumField() {
			if f := g.Type().Field(i); f.IsExported() {
				diffValue(path+"."+f.Name, g.Field(i), w.Field(i), out)
			}
		}
	case reflect.Slice, reflect.Map:
		if g.Len() == 0 && w.Len() == 0 {
			return
		}
		if !reflect.DeepEqual(g.Interface(), w.Interface()) {
			*out = append(*out, fmt.Sprintf("%s = %s, want %s", path, show(g), show(w)))
		}
	default:
		if !reflect.DeepEqual(g.Interface(), w.Interface()) {
			*out = append(*out, fmt.Sprintf("%s = %s, want %s", path, show(g), show(w)))
		}
	}
}

// show prints a value for a failure message: times and ids as text, byte
// slices quoted, maps with their values' dynamic types (a json.Number that
// came back as a float64 must be visible as such).
func show(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "nil"
		}
		return "&" + show(v.Elem())
	}
	x := v.Interface()
	switch x := x.(type) {
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case []byte:
		if x == nil {
			return "nil"
		}
		return fmt.Sprintf("%q", x)
	case fmt.Stringer:
		return x.String()
	}
	if v.Kind() == reflect.Map {
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, fmt.Sprintf("%v: %s", k, dynamic(v.MapIndex(k).Interface())))
		}
		slices.Sort(keys)
		return "{" + strings.Join(keys, ", ") + "}"
	}
	return fmt.Sprintf("%#v", x)
}

// dynamic prints a metadata value with its type where the type matters:
// json.Number(12345678901234567890) and float64(1.2345678901234567e+19)
// look alike otherwise.
func dynamic(x any) string {
	switch x := x.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case bool, nil:
		return fmt.Sprint(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = dynamic(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%T(%v)", x, x)
}

// requireNoZeroFields stops the test when a fixture leaves an exported
// field (nested ones included) at its zero value: a round trip proves
// nothing about a field that was never set. A field added to the domain
// later fails here until the fixture sets it, and then fails the round trip
// until every engine stores it.
func requireNoZeroFields(t *testing.T, v any) {
	t.Helper()
	var zero []string
	zeroFields(typeName(reflect.TypeOf(v)), reflect.ValueOf(v), &zero)
	if len(zero) > 0 {
		t.Fatalf("the fixture leaves %s at the zero value: set every field to something distinctive", strings.Join(zero, ", "))
	}
}

func zeroFields(path string, v reflect.Value, out *[]string) {
	if v.Type() == timeType {
		if v.IsZero() {
			*out = append(*out, path)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			*out = append(*out, path)
		} else {
			zeroFields(path, v.Elem(), out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				zeroFields(path+"."+f.Name, v.Field(i), out)
			}
		}
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			*out = append(*out, path)
		}
	default:
		if v.IsZero() {
			*out = append(*out, path)
		}
	}
}

// requireAllChanged stops the test unless the update fixture after differs
// from before in every field but those named in fixed (paths without the
// type name: "ID", "Card.Billing.Zip"), and agrees with it in those: an
// update test proves only what it changes. Times count as changed when they
// differ at the microsecond.
func requireAllChanged(t *testing.T, before, after any, fixed ...string) {
	t.Helper()
	var same, moved []string
	changedFields("", reflect.ValueOf(before), reflect.ValueOf(after), fixed, &same, &moved)
	if len(same) > 0 {
		t.Fatalf("the update fixture leaves %s unchanged: change every field an update may change", strings.Join(same, ", "))
	}
	if len(moved) > 0 {
		t.Fatalf("the update fixture changes %s, which the suite treats as fixed at creation", strings.Join(moved, ", "))
	}
}

func changedFields(path string, a, b reflect.Value, fixed []string, same, moved *[]string) {
	isFixed := slices.Contains(fixed, path)
	record := func(equal bool) {
		switch {
		case equal && !isFixed:
			*same = append(*same, path)
		case !equal && isFixed:
			*moved = append(*moved, path)
		}
	}
	if a.Type() == timeType {
		ta, tb := a.Interface().(time.Time), b.Interface().(time.Time)
		record(ta.Truncate(time.Microsecond).Equal(tb.Truncate(time.Microsecond)))
		return
	}
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() || isFixed {
			record(a.IsNil() && b.IsNil() || !a.IsNil() && !b.IsNil() && reflect.DeepEqual(a.Interface(), b.Interface()))
			return
		}
		changedFields(path, a.Elem(), b.Elem(), fixed, same, moved)
	case reflect.Struct:
		if isFixed {
			record(reflect.DeepEqual(a.Interface(), b.Interface()))
			return
		}
		for i := range a.NumField() {
			if f := a.Type().Field(i); f.IsExported() {
				changedFields(join(f.Name), a.Field(i), b.Field(i), fixed, same, moved)
			}
		}
	default:
		record(reflect.DeepEqual(a.Interface(), b.Interface()))
	}
}
