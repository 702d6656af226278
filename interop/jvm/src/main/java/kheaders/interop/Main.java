package kheaders.interop;

import java.util.Arrays;

/** Entry point: {@code Main COMMAND ARGS...}; each command prints JSON lines on stdout. */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: Main exchange|hooks|spring-retry ARGS...");
            System.exit(2);
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "exchange" -> Exchange.run(rest);
            case "hooks" -> Hooks.run(rest);
            case "spring-retry" -> SpringRetry.run(rest);
            case "cloudevents" -> CloudEvents.run(rest);
            case "tracing" -> Tracing.run(rest);
            default -> {
                System.err.println("unknown command: " + args[0]);
                System.exit(2);
            }
        }
        Json.emit(Json.obj("event", "done"));
        System.exit(0);
    }
}
