// The protobuf form of /openapi/v2: gnostic's openapi.v2.Document, which client-go decodes with
// proto.Unmarshal. Only the messages and fields a Kubernetes document uses are declared (field numbers
// as gnostic's OpenAPIv2.proto has them; unknown fields would be skipped by readers anyway).
// Vendor extensions travel as YAML text in Any.yaml, as gnostic's compiler writes them.
import protobuf from 'protobufjs';
import { stringify } from 'yaml';
import type { Json } from './v3.js';

const OPENAPI_V2_PROTO = `
syntax = "proto3";
package openapi.v2;

message Document {
  string swagger = 1;
  Info info = 2;
  Paths paths = 8;
  Definitions definitions = 9;
  repeated SecurityRequirement security = 12;
  SecurityDefinitions security_definitions = 13;
}
message Info { string title = 1; string version = 2; }
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }

message Paths { repeated NamedPathItem path = 2; }
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem {
  Operation get = 2;
  Operation put = 3;
  Operation post = 4;
  Operation delete = 5;
  Operation patch = 8;
  repeated ParametersItem parameters = 9;
}
message Operation {
  repeated string tags = 1;
  string description = 3;
  string operation_id = 5;
  repeated string produces = 6;
  repeated string consumes = 7;
  repeated ParametersItem parameters = 8;
  Responses responses = 9;
  repeated string schemes = 10;
  repeated NamedAny vendor_extension = 13;
}
message ParametersItem { oneof oneof { Parameter parameter = 1; } }
message Parameter {
  oneof oneof {
    BodyParameter body_parameter = 1;
    NonBodyParameter non_body_parameter = 2;
  }
}
message BodyParameter {
  string description = 1;
  string name = 2;
  string in = 3;
  bool required = 4;
  Schema schema = 5;
}
message NonBodyParameter {
  oneof oneof {
    QueryParameterSubSchema query_parameter_sub_schema = 3;
    PathParameterSubSchema path_parameter_sub_schema = 4;
  }
}
message QueryParameterSubSchema {
  bool required = 1;
  string in = 2;
  string description = 3;
  string name = 4;
  string type = 6;
  bool unique_items = 20;
}
message PathParameterSubSchema {
  bool required = 1;
  string in = 2;
  string description = 3;
  string name = 4;
  string type = 5;
  bool unique_items = 19;
}
message Responses { repeated NamedResponseValue response_code = 1; }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue { oneof oneof { Response response = 1; } }
message Response { string description = 1; SchemaItem schema = 2; }
message SchemaItem { oneof oneof { Schema schema = 1; } }

message Definitions { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Schema {
  string _ref = 1;
  string format = 2;
  string description = 4;
  repeated string required = 19;
  AdditionalPropertiesItem additional_properties = 21;
  TypeItem type = 22;
  ItemsItem items = 23;
  Properties properties = 25;
  repeated NamedAny vendor_extension = 31;
}
message AdditionalPropertiesItem { oneof oneof { Schema schema = 1; bool boolean = 2; } }
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message Properties { repeated NamedSchema additional_properties = 1; }

message SecurityRequirement { repeated NamedStringArray additional_properties = 1; }
message NamedStringArray { string name = 1; StringArray value = 2; }
message StringArray { repeated string value = 1; }
message SecurityDefinitions { repeated NamedSecurityDefinitionsItem additional_properties = 1; }
message NamedSecurityDefinitionsItem { string name = 1; SecurityDefinitionsItem value = 2; }
message SecurityDefinitionsItem { oneof oneof { ApiKeySecurity api_key_security = 2; } }
message ApiKeySecurity { string type = 1; string name = 2; string in = 3; string description = 4; }
`;

let root: protobuf.Root | undefined;

/** The openapi.v2 types, parsed once (keepCase: objects carry the proto's snake_case names). */
export function openapiV2Type(name: string): protobuf.Type {
  root ??= protobuf.parse(OPENAPI_V2_PROTO, { keepCase: true }).root;
  return root.lookupType(`openapi.v2.${name}`);
}

const named = <T>(o: Record<string, T>, f: (v: T) => unknown) => Object.entries(o).map(([name, value]) => ({ name, value: f(value) }));

// Extension values repeat (every operation of a kind carries the same group-version-kind): render each once.
const yamlText = new Map<string, string>();

function vendorExtensions(o: Json): unknown[] {
  return Object.entries(o)
    .filter(([k]) => k.startsWith('x-'))
    .map(([name, v]) => {
      const key = JSON.stringify(v);
      let yaml = yamlText.get(key);
      if (yaml === undefined) yamlText.set(key, (yaml = stringify(v, { lineWidth: 0 })));
      return { name, value: { yaml } };
    });
}

function schema(s: Json): unknown {
  const additional = s.additionalProperties as Json | boolean | undefined;
  return {
    _ref: s.$ref,
    format: s.format,
    description: s.description,
    required: s.required,
    additional_properties: additional === undefined ? undefined : typeof additional === 'boolean' ? { boolean: additional } : { schema: schema(additional) },
    type: s.type === undefined ? undefined : { value: [s.type] },
    items: s.items === undefined ? undefined : { schema: [schema(s.items as Json)] },
    properties: s.properties === undefined ? undefined : { additional_properties: named(s.properties as Record<string, Json>, schema) },
    vendor_extension: vendorExtensions(s),
  };
}

function parameter(p: Json): unknown {
  if (p.in === 'body') {
    return { parameter: { body_parameter: { description: p.description, name: p.name, in: p.in, required: p.required, schema: schema(p.schema as Json) } } };
  }
  const sub = { required: p.required, in: p.in, description: p.description, name: p.name, type: p.type, unique_items: p.uniqueItems };
  return { parameter: { non_body_parameter: p.in === 'path' ? { path_parameter_sub_schema: sub } : { query_parameter_sub_schema: sub } } };
}

const parameters = (ps: unknown) => (ps as Json[] | undefined)?.map(parameter);

function operation(op: Json): unknown {
  return {
    tags: op.tags,
    description: op.description,
    operation_id: op.operationId,
    produces: op.produces,
    consumes: op.consumes,
    parameters: parameters(op.parameters),
    responses: {
      response_code: named(op.responses as Record<string, Json>, (r) => ({
        response: { description: r.description, schema: r.schema ? { schema: schema(r.schema as Json) } : undefined },
      })),
    },
    schemes: op.schemes,
    vendor_extension: vendorExtensions(op),
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The Swagger 2.0 document `doc` (as served in JSON) encoded as an openapi.v2.Document. */
export function encodeOpenAPIV2(doc: Json): Buffer {
  const paths = named(doc.paths as Record<string, Json>, (item) => ({
    ...Object.fromEntries(METHODS.filter((m) => item[m]).map((m) => [m, operation(item[m] as Json)])),
    parameters: parameters(item.parameters),
  }));
  const security = (doc.security as Record<string, string[]>[]).map((req) => ({ additional_properties: named(req, (scopes) => ({ value: scopes })) }));
  const securityDefinitions = named(doc.securityDefinitions as Record<string, Json>, (d) => ({ api_key_security: d }));
  const type = openapiV2Type('Document');
  const message = {
    swagger: doc.swagger,
    info: doc.info,
    paths: { path: paths },
    definitions: { additional_properties: named(doc.definitions as Record<string, Json>, schema) },
    security,
    security_definitions: { additional_properties: securityDefinitions },
  };
  const bytes = type.encode(message).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
