/// How a `with:` key, a job id or an output key is written in an environment variable's name
/// (`JOBRUNNER_PARAM_<KEY>`, `JOBRUNNER_OUT_<JOB>_<KEY>`, SPEC 5.7).
public enum EnvironmentName {
    /// Upper case, every character other than A-Z and 0-9 as `_`: `max-age` → `MAX_AGE`.
    /// Different keys can give the same name (`a-b`, `a_b`, `A.b`); the loader refuses such
    /// `with:` keys in one job.
    public static func of(_ text: String) -> String {
        String(
            text.uppercased().unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "A"..."Z", "0"..."9": return Character(scalar)
                default: return "_"
                }
            })
    }
}
