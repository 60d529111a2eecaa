// Package typednil tells a value that is nil, or an interface holding a nil
// pointer, func, map, slice or channel (a typed nil, which would panic when
// used), from a usable one. The root package and toolcall refuse such tools
// and collaborators with it. It imports nothing of the module.
package typednil

import "reflect"

// Is reports whether v is nil or an interface holding a nil pointer, func,
// map, slice or channel.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
