package io.github.ringd.client;

import org.jspecify.annotations.Nullable;

/**
 * An RFC 9457 problem document ({@code application/problem+json}), as ringd answers every error.
 *
 * @param type the problem type, {@code urn:ringd:problem:<slug>}
 * @param title the problem's short summary
 * @param status the HTTP status the document states
 * @param detail what went wrong and how to fix it
 * @param field the offending input (a JSON path such as {@code ops[1].node.weight}), if any
 */
public record Problem(
    String type, String title, int status, String detail, @Nullable String field) {
  private static final String PREFIX = "urn:ringd:problem:";

  /** The last part of the type ({@code ring-not-found}). */
  public String slug() {
    return type.startsWith(PREFIX) ? type.substring(PREFIX.length()) : type;
  }
}
