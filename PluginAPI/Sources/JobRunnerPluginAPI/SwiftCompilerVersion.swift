/// The Swift compiler this code was built with, as "MAJOR.MINOR". Swift has no stable ABI on
/// Linux, so jobrunner loads only Swift plugins built by the same compiler version as itself.
public let swiftCompilerVersion: String = {
    #if compiler(>=7.0)
        return "7.x"
    #elseif compiler(>=6.5)
        return "6.5"
    #elseif compiler(>=6.4)
        return "6.4"
    #elseif compiler(>=6.3)
        return "6.3"
    #elseif compiler(>=6.2)
        return "6.2"
    #elseif compiler(>=6.1)
        return "6.1"
    #else
        return "6.0"
    #endif
}()
