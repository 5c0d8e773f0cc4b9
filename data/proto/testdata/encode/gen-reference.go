//go:build ignore
// +build ignore

// gen-reference writes the Go reference bytes that
// src/apiserver/protobuf/to-proto.test.ts compares the TypeScript encoder
// with: for each case of cases.json, the JSON object is decoded into the
// typed Go struct (client-go's scheme, no defaulting) and encoded with
// apimachinery's protobuf serializer (k8s\0 + runtime.Unknown + gogo
// Marshal), or, for watch cases, framed as kube-apiserver's WatchServer
// frames a WatchEvent (length-delimited framer, raw protobuf serializer,
// object as an enveloped body). It also writes schema-go.json: the message
// schema of every type involved, in data/proto/schema.json.gz's format,
// read from the Go structs by reflection, so the test can encode with
// exactly the fields this Go version has.
//
// Run in GOPATH mode inside a Kubernetes source tree (v1.20.2 was used):
//
//	mkdir -p $K8S/hack/pbref
//	grep -v '^// *[+]*build ignore\|^//go:build ignore' gen-reference.go > $K8S/hack/pbref/main.go
//	cd $K8S && GO111MODULE=off GOPATH=<gopath holding k8s.io/kubernetes> \
//	  go run ./hack/pbref <this directory>
//
// (Go 1.19 builds the v1.20.2 tree; the program must sit inside it so that
// its vendor/ directory resolves the imports.)
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/ioutil"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gogo/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/client-go/kubernetes/scheme"
)

type testCase struct {
	Name   string          `json:"name"`
	Object json.RawMessage `json:"object"`
	Watch  string          `json:"watch"`
	From   string          `json:"from"`
}

func main() {
	dir := os.Args[1]
	data, err := ioutil.ReadFile(filepath.Join(dir, "cases.json"))
	check(err)
	var cases []testCase
	check(json.Unmarshal(data, &cases))
	byName := map[string]testCase{}
	for _, c := range cases {
		byName[c.Name] = c
	}

	sch := scheme.Scheme
	check(metav1.AddMetaToScheme(sch))
	codecs := serializer.NewCodecFactory(sch)
	pb := protobuf.NewSerializer(sch, sch)
	raw := protobuf.NewRawSerializer(sch, sch)

	var roots []reflect.Type
	for _, c := range cases {
		src := c.Object
		if c.From != "" {
			src = byName[c.From].Object
		}
		obj, _, err := codecs.UniversalDeserializer().Decode(src, nil, nil)
		check(err)
		roots = append(roots, reflect.TypeOf(obj).Elem())
		var out bytes.Buffer
		if c.Watch == "" {
			check(pb.Encode(obj, &out))
		} else {
			// WatchServer: EmbeddedEncoder for the object, then the event through the stream encoder.
			var embedded bytes.Buffer
			check(pb.Encode(obj, &embedded))
			gv := obj.GetObjectKind().GroupVersionKind().GroupVersion()
			enc := streaming.NewEncoder(protobuf.LengthDelimitedFramer.NewFrameWriter(&out), codecs.EncoderForVersion(raw, gv))
			ev := &metav1.WatchEvent{Type: c.Watch, Object: runtime.RawExtension{Raw: embedded.Bytes()}}
			check(enc.Encode(ev))
		}
		check(ioutil.WriteFile(filepath.Join(dir, c.Name+".bin"), out.Bytes(), 0o644))
	}
	roots = append(roots, reflect.TypeOf(metav1.WatchEvent{}))

	messages := map[string][][]interface{}{}
	for _, t := range roots {
		walk(t, messages)
	}
	out, err := json.MarshalIndent(map[string]interface{}{"v": 1, "source": "k8s.io/api v1.20.2 Go structs (reflection)", "messages": messages}, "", " ")
	check(err)
	check(ioutil.WriteFile(filepath.Join(dir, "schema-go.json"), append(out, '\n'), 0o644))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var protoTag = regexp.MustCompile(`^(\w+),(\d+)`)

// Special messages whose Go structs do not carry their protobuf fields.
var fixed = map[string][][]interface{}{
	"k8s.io.apimachinery.pkg.apis.meta.v1.Time":      {{1, "seconds", "int64", 0}, {2, "nanos", "int32", 0}},
	"k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": {{1, "seconds", "int64", 0}, {2, "nanos", "int32", 0}},
	"k8s.io.apimachinery.pkg.api.resource.Quantity":  {{1, "string", "string", 0}},
}

func isMessage(t reflect.Type) bool {
	_, ok := reflect.New(t).Interface().(proto.Message)
	return ok
}

func messageName(t reflect.Type) string {
	m, ok := reflect.New(t).Interface().(proto.Message)
	if !ok {
		panic("not a message: " + t.String())
	}
	name := proto.MessageName(m)
	if name == "" {
		panic("unregistered message: " + t.String())
	}
	return name
}

func walk(t reflect.Type, out map[string][][]interface{}) string {
	name := messageName(t)
	if _, done := out[name]; done {
		return name
	}
	if f, ok := fixed[name]; ok {
		out[name] = f
		return name
	}
	out[name] = nil // mark before recursing
	fields := [][]interface{}{}
	if t.Kind() == reflect.Slice { // Verbs, ExtraValue: repeated items
		fields = append(fields, []interface{}{1, "items", scalar(t.Elem(), "bytes"), 1})
	}
	for i := 0; t.Kind() == reflect.Struct && i < t.NumField(); i++ {
		f := t.Field(i)
		m := protoTag.FindStringSubmatch(f.Tag.Get("protobuf"))
		if m == nil {
			continue
		}
		no, _ := strconv.Atoi(m[2])
		jsonTag := f.Tag.Get("json")
		jsonName := strings.Split(jsonTag, ",")[0]
		inline := jsonName == "" && strings.Contains(jsonTag, "inline")
		if jsonName == "" && !inline {
			jsonName = f.Name
		}
		if inline { // named as the generator names it: lowerCamel of the Go field
			jsonName = strings.ToLower(f.Name[:1]) + f.Name[1:]
		}
		flags := 0
		ft := f.Type
		if ft.Kind() == reflect.Ptr {
			flags |= 2
			ft = ft.Elem()
		}
		if inline {
			flags |= 4
		}
		var typ interface{}
		switch {
		case ft.Kind() == reflect.Map:
			typ = []interface{}{"map", scalar(ft.Key(), "bytes"), fieldType(ft.Elem(), "bytes", out)}
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8 && isMessage(ft):
			flags |= 8 // a named Go slice type that is its own message (Verbs)
			typ = walk(ft, out)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
			// repeated (some struct tags say "opt" for repeated fields: the tag's label is not reliable)
			flags |= 1
			typ = fieldType(ft.Elem(), m[1], out)
		default:
			typ = fieldType(ft, m[1], out)
		}
		fields = append(fields, []interface{}{no, jsonName, typ, flags})
	}
	sort.SliceStable(fields, func(a, b int) bool { return fields[a][0].(int) < fields[b][0].(int) })
	out[name] = fields
	return name
}

func fieldType(t reflect.Type, wire string, out map[string][][]interface{}) interface{} {
	if t.Kind() == reflect.Ptr {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct || (t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 && isMessage(t)) {
		return walk(t, out)
	}
	return scalar(t, wire)
}

func scalar(t reflect.Type, wire string) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int32:
		return "int32"
	case reflect.Int64:
		return "int64"
	case reflect.Uint32:
		return "uint32"
	case reflect.Uint64:
		return "uint64"
	case reflect.Float64:
		return "double"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
	}
	panic(fmt.Sprintf("unsupported scalar %s (%s)", t, wire))
}
