import { describe, expect, it } from "vitest";
import { csvRecord } from "./csv.ts";

describe("csvRecord", () => {
  it("leaves plain fields bare and ends the record in CRLF", () => {
    expect(csvRecord(["a", 1, "2.500000", undefined, ""])).toBe("a,1,2.500000,,\r\n");
  });

  it("quotes fields with commas, quotes, CR or LF and doubles their quotes (RFC 4180)", () => {
    expect(csvRecord(['say "hi"', "a,b", "two\nlines", "cr\r", "plain"])).toBe(
      '"say ""hi""","a,b","two\nlines","cr\r",plain\r\n',
    );
  });
});
