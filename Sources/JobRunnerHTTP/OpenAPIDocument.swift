/// `GET /api/v1/openapi.json`: the API described in OpenAPI 3 (every route of SPEC 7 but the
/// HTML pages), as checked by the schemathesis test (`make test-api`).
enum OpenAPIDocument {
    static let json = #"""
        {
          "openapi": "3.0.3",
          "info": {"title": "jobrunner", "version": "1", "description": "The JSON API, event stream and metrics of jobrunner's dashboard (docs/reference.md, Dashboard, API and metrics). With a token, every request needs Authorization: Bearer TOKEN."},
          "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
              "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
              "Ok": {"type": "object", "required": ["ok", "message"], "properties": {"ok": {"type": "boolean"}, "message": {"type": "string"}}},
              "Status": {"type": "object", "required": ["run", "jobs", "pipelines"], "properties": {
                "run": {"nullable": true, "type": "object", "properties": {
                  "id": {"type": "string"}, "state": {"type": "string"},
                  "startedAt": {"type": "string", "nullable": true}, "finishedAt": {"type": "string", "nullable": true}}},
                "jobs": {"type": "array", "items": {"type": "object", "required": ["id", "pipeline", "state", "attempts"], "properties": {
                  "id": {"type": "string"}, "pipeline": {"type": "string"}, "state": {"type": "string"},
                  "reason": {"type": "string", "nullable": true}, "attempts": {"type": "integer"},
                  "exitCode": {"type": "integer", "nullable": true},
                  "startedAt": {"type": "string", "nullable": true}, "finishedAt": {"type": "string", "nullable": true},
                  "nextAttemptAt": {"type": "string", "nullable": true},
                  "outputs": {"type": "object", "additionalProperties": {"type": "string"}}}}},
                "pipelines": {"type": "array", "items": {"type": "object", "properties": {
                  "name": {"type": "string"}, "maxConcurrent": {"type": "integer"}, "suspended": {"type": "integer"}, "running": {"type": "integer"}}}},
                "periodic": {"type": "array", "items": {"type": "object"}}}},
              "Run": {"type": "object", "required": ["id", "state", "startedAt", "counts"], "properties": {
                "id": {"type": "string"}, "state": {"type": "string"}, "occurrenceOf": {"type": "string", "nullable": true},
                "scheduledAt": {"type": "string", "nullable": true}, "startedAt": {"type": "string", "nullable": true},
                "finishedAt": {"type": "string", "nullable": true},
                "counts": {"type": "object", "additionalProperties": {"type": "integer"}}}}
            },
            "responses": {
              "NotFound": {"description": "No such run, job, attempt or pipeline", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "Unauthorized": {"description": "The token is missing or wrong", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "Forbidden": {"description": "Read-only, a stale CSRF token, or another site", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "Conflict": {"description": "Refused as the run stands", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "Done": {"description": "Done; the message is what the command prints", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Ok"}}}},
              "BadRequest": {"description": "A parameter that cannot be used", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "ServerError": {"description": "The store could not be used", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            },
            "parameters": {
              "run": {"name": "run", "in": "path", "required": true, "schema": {"type": "string"}},
              "job": {"name": "job", "in": "path", "required": true, "schema": {"type": "string"}},
              "pipeline": {"name": "pipeline", "in": "path", "required": true, "schema": {"type": "string"}}
            }
          },
          "security": [{}, {"bearer": []}],
          "paths": {
            "/api/v1/status": {"get": {"summary": "status --json of the current run, or of ?run=ID", "operationId": "status",
              "parameters": [{"name": "run", "in": "query", "required": false, "schema": {"type": "string"}}],
              "responses": {"200": {"description": "what status --json prints", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Status"}}}},
                "401": {"$ref": "#/components/responses/Unauthorized"}, "404": {"$ref": "#/components/responses/NotFound"}, "500": {"$ref": "#/components/responses/ServerError"}}}},
            "/api/v1/runs": {"get": {"summary": "runs --json, newest first", "operationId": "runs",
              "parameters": [{"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 10000}},
                {"name": "job", "in": "query", "required": false, "schema": {"type": "string"}}],
              "responses": {"200": {"description": "The runs", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Run"}}}}},
                "400": {"$ref": "#/components/responses/BadRequest"}, "401": {"$ref": "#/components/responses/Unauthorized"}, "500": {"$ref": "#/components/responses/ServerError"}}}},
            "/api/v1/runs/{run}": {"get": {"summary": "status --json --run ID", "operationId": "run",
              "parameters": [{"$ref": "#/components/parameters/run"}],
              "responses": {"200": {"description": "what status --json prints", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Status"}}}},
                "401": {"$ref": "#/components/responses/Unauthorized"}, "404": {"$ref": "#/components/responses/NotFound"}, "500": {"$ref": "#/components/responses/ServerError"}}}},
            "/api/v1/runs/{run}/jobs/{job}/attempts/{attempt}/log": {"get": {"summary": "An attempt's log; Range: bytes=A-B honoured", "operationId": "log",
              "parameters": [{"$ref": "#/components/parameters/run"}, {"$ref": "#/components/parameters/job"},
                {"name": "attempt", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}},
                {"name": "download", "in": "query", "required": false, "schema": {"type": "string"}},
                {"name": "Range", "in": "header", "required": false, "schema": {"type": "string"}}],
              "responses": {"200": {"description": "The whole log", "content": {"text/plain": {"schema": {"type": "string"}}}},
                "206": {"description": "The range asked for", "content": {"text/plain": {"schema": {"type": "string"}}}},
                "416": {"description": "The range starts at or past the end"},
                "401": {"$ref": "#/components/responses/Unauthorized"}, "404": {"$ref": "#/components/responses/NotFound"}, "500": {"$ref": "#/components/responses/ServerError"}}}},
            "/api/v1/runs/{run}/jobs/{job}/retry": {"post": {"summary": "jobrunner retry JOB", "operationId": "retry", "parameters": [{"$ref": "#/components/parameters/run"}, {"$ref": "#/components/parameters/job"}],
              "responses": {"200": {"$ref": "#/components/responses/Done"}, "401": {"$ref": "#/components/responses/Unauthorized"}, "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"}, "409": {"$ref": "#/components/responses/Conflict"}, "500": {"$ref": "#/components/responses/ServerError"}}}},
            "/api/v1/runs/{run}/jobs/{job}/skip": {"post": {"summary": "jobrunner skip JOB", "operationId": "skip", "parameters": [{"$ref": "#/components/parameters/run"}, {"$ref": "#/components/parameters/job"}],
              "responses": {"200": {"$ref": "#/components/responses/Done"}, "401": {"$ref": "#/components/responses/Unauthorized"}, "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"}, "409": {"$ref": "#/components/responses/Conflict"}, "500": {"$ref": "#/components/responses/ServerError"}}}},
            "/api/v1/runs/{run}/jobs/{job}/cancel": {"post": {"summary": "jobrunner cancel JOB", "operationId": "cancel", "parameters": [{"$ref": "#/components/parameters/run"}, {"$ref": "#/components/parameters/job"}],
              "responses": {"200": {"$ref": "#/components/responses/Done"}, "401": {"$ref": "#/components/responses/Unauthorized"}, "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"}, "409": {"$ref": "#/components/responses/Conflict"}, "500": {"$ref": "#/components/responses/ServerError"}}}},
            "/api/v1/pipelines/{pipeline}/suspend": {"post": {"summary": "jobrunner suspend PIPELINE", "operationId": "suspend", "parameters": [{"$ref": "#/components/parameters/pipeline"}],
              "responses": {"200": {"$ref": "#/components/responses/Done"}, "401": {"$ref": "#/components/responses/Unauthorized"}, "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"}, "409": {"$ref": "#/components/responses/Conflict"}, "500": {"$ref": "#/components/responses/ServerError"}}}},
            "/api/v1/pipelines/{pipeline}/resume": {"post": {"summary": "jobrunner resume PIPELINE", "operationId": "resume", "parameters": [{"$ref": "#/components/parameters/pipeline"}],
              "responses": {"200": {"$ref": "#/components/responses/Done"}, "401": {"$ref": "#/components/responses/Unauthorized"}, "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"}, "409": {"$ref": "#/components/responses/Conflict"}, "500": {"$ref": "#/components/responses/ServerError"}}}},
            "/api/v1/jobs/{job}/trigger": {"post": {"summary": "jobrunner trigger JOB", "description": "404: no such job; 409: a one-shot job (trigger starts occurrences of periodic jobs), or a trigger refused as the job stands (an occurrence still runs under overlap: skip).", "operationId": "trigger", "parameters": [{"$ref": "#/components/parameters/job"}],
              "responses": {"200": {"$ref": "#/components/responses/Done"}, "401": {"$ref": "#/components/responses/Unauthorized"}, "403": {"$ref": "#/components/responses/Forbidden"}, "404": {"$ref": "#/components/responses/NotFound"}, "409": {"$ref": "#/components/responses/Conflict"}, "500": {"$ref": "#/components/responses/ServerError"}}}},
            "/api/v1/openapi.json": {"get": {"summary": "This document", "operationId": "openapi",
              "responses": {"200": {"description": "OpenAPI 3", "content": {"application/json": {"schema": {"type": "object"}}}}, "401": {"$ref": "#/components/responses/Unauthorized"}}}},
            "/events": {"get": {"summary": "Every committed event as Server-Sent Events (id: sequence; Last-Event-ID resumes)", "operationId": "events",
              "parameters": [{"name": "Last-Event-ID", "in": "header", "required": false, "schema": {"type": "integer", "minimum": 0}},
                {"name": "after", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 0}}],
              "responses": {"200": {"description": "A stream that does not end", "content": {"text/event-stream": {"schema": {"type": "string"}}}}, "401": {"$ref": "#/components/responses/Unauthorized"}}}},
            "/metrics": {"get": {"summary": "Prometheus text", "operationId": "metrics",
              "responses": {"200": {"description": "Every name starts jobrunner_", "content": {"text/plain": {"schema": {"type": "string"}}}}, "401": {"$ref": "#/components/responses/Unauthorized"}}}}
          }
        }
        """#
}
