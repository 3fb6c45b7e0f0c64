package io.github.ringd.placement;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashSet;
import java.util.Set;

/**
 * Streaming reads of JSON documents. A document is first read through once to check its syntax, so
 * that malformed JSON anywhere is refused as such before any field is judged, as the server (and
 * the other clients) refuse it while parsing; then its fields are read in document order, because
 * spec 2.4 check 0 reports the first bad field in the document.
 */
final class JsonRead {
  private JsonRead() {}

  private static final JsonFactory FACTORY = new JsonFactory();

  /** Reads a document with a parser positioned at its first token. */
  interface Reader<T> {
    T read(JsonParser p) throws IOException;
  }

  static PlacementException invalid(String message) {
    return new PlacementException(PlacementException.Reason.INVALID_JSON, message);
  }

  /** Parses a whole document: syntax first, then reader, then nothing may follow. */
  static <T> T document(byte[] json, String what, Reader<T> reader) {
    try (JsonParser p = FACTORY.createParser(json)) {
      while (p.nextToken() != null) {
        // Syntax only: each token is read and dropped.
      }
    } catch (IOException e) {
      throw invalid(what + ": " + firstLine(e.getMessage()));
    }
    try (JsonParser p = FACTORY.createParser(json)) {
      p.nextToken();
      T value = reader.read(p);
      if (p.nextToken() != null) {
        throw invalid(what + ": data after the value");
      }
      return value;
    } catch (IOException e) {
      // The syntax was checked: only a constraint on a value's size can end here.
      throw invalid(what + ": " + firstLine(e.getMessage()));
    } catch (UncheckedIOException e) {
      throw invalid(what + ": " + firstLine(e.getCause().getMessage()));
    }
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "malformed JSON";
    }
    int nl = s.indexOf('\n');
    return Strings.excerpt(nl < 0 ? s : s.substring(0, nl));
  }

  /** Visits the members of an object in document order. */
  interface FieldVisitor {
    /** Reads the member named name, the parser on its value; null values are not visited. */
    void field(String name, JsonParser p) throws IOException;
  }

  /**
   * Reads an object, the parser on its START_OBJECT, calling visit on each non-null member. A
   * repeated member is refused, as the server's reader refuses it. The parser ends on END_OBJECT.
   */
  static void object(JsonParser p, String what, FieldVisitor visit) throws IOException {
    if (p.currentToken() != JsonToken.START_OBJECT) {
      throw invalid(what + ": not a JSON object");
    }
    Set<String> seen = new HashSet<>();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      if (!seen.add(name)) {
        throw invalid(what + ": field `" + Strings.excerpt(name) + "` appears twice");
      }
      JsonToken t = p.nextToken();
      if (t == JsonToken.VALUE_NULL) {
        continue; // null is absent
      }
      visit.field(name, p);
      // A visitor that did not read the value leaves the parser on it: step over it.
      p.skipChildren();
    }
  }

  static String string(JsonParser p, String what) throws IOException {
    if (p.currentToken() != JsonToken.VALUE_STRING) {
      throw invalid(what + " must be a string");
    }
    return p.getText();
  }

  static boolean bool(JsonParser p, String what) {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_TRUE) {
      return true;
    }
    if (t == JsonToken.VALUE_FALSE) {
      return false;
    }
    throw invalid(what + " must be true or false");
  }

  /**
   * Reads an integer literal. A value too large for a long reads as Long.MAX_VALUE (or MIN_VALUE),
   * so that it fails its range check with the field's own reason (2.4: "also for values not fitting
   * u32") rather than as bad JSON.
   */
  static long integer(JsonParser p, String what) throws IOException {
    if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
      throw invalid(what + " must be an integer");
    }
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
      return p.getBigIntegerValue().signum() < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return p.getLongValue();
  }

  /** Narrows a range-checked-later long to int without wrapping. */
  static int clamp(long v) {
    return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, v));
  }
}
